// The gRPC SinkPort against a real sink process: F4 outcomes become
// advanced/regression, every transport failure becomes unavailable with the
// gRPC code name, and calls are bounded by the sink deadline. Advances go
// as messages of an AdvanceFenceStream; a stream that broke is replaced at
// the next advance, and a sink without the stream gets unary calls.
import { createServer } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencing, type AdvanceFenceRequest__Output, type AdvanceFenceResponse } from '@fencer/proto';
import { startFencer, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';
import { GrpcSinkClient } from '../src/adapters/sink-client.js';
import { fresh, startSinkProcess } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let sink: FencerProcess;
let client: GrpcSinkClient;

beforeAll(async () => {
  dir = tempDir();
  sink = await startSinkProcess(dir.path);
  // The default deadline: a first call also sets up the connection, which a loaded machine can make slow.
  client = new GrpcSinkClient({ address: sink.address, token: null, deadlineMs: 2_000 });
});

afterAll(async () => {
  client.close();
  await stopFencer(sink);
  dir.remove();
});

describe('GrpcSinkClient (SinkPort over gRPC)', () => {
  it('F4: advances, repeats idempotently for the same grant id, and reports regression with the fence', async () => {
    const resource = fresh('client');
    expect(await client.getFence(resource)).toEqual({ kind: 'fence', fence: 0n });
    expect(await client.advanceFence({ resource, token: 5n, grantId: 'g1', ownerId: 'alice' })).toEqual({
      kind: 'advanced',
      fence: 5n,
    });
    expect(await client.advanceFence({ resource, token: 5n, grantId: 'g1', ownerId: 'alice' })).toEqual({
      kind: 'advanced',
      fence: 5n,
    });
    expect(await client.advanceFence({ resource, token: 5n, grantId: 'g2', ownerId: 'alice' })).toEqual({
      kind: 'regression',
      fence: 5n,
    });
    expect(await client.advanceFence({ resource, token: 3n, grantId: 'g3', ownerId: 'alice' })).toEqual({
      kind: 'regression',
      fence: 5n,
    });
    expect(await client.getFence(resource)).toEqual({ kind: 'fence', fence: 5n });
  });

  it('a sink that does not answer within the deadline is unavailable (DEADLINE_EXCEEDED), not a hang', async () => {
    const resource = fresh('stalled');
    expect((await client.advanceFence({ resource, token: 1n, grantId: 'warm', ownerId: 'alice' })).kind).toBe(
      'advanced',
    );
    sink.kill('SIGSTOP');
    try {
      expect(await client.advanceFence({ resource, token: 2n, grantId: 'g', ownerId: 'alice' })).toEqual({
        kind: 'unavailable',
        sinkCode: 'DEADLINE_EXCEEDED',
      });
      expect(await client.getFence(resource)).toEqual({ kind: 'unavailable', sinkCode: 'DEADLINE_EXCEEDED' });
    } finally {
      sink.kill('SIGCONT');
    }
    // The stream that timed out was given up: the next advance opens another, and is answered.
    expect(await client.advanceFence({ resource, token: 3n, grantId: 'after', ownerId: 'alice' })).toEqual({
      kind: 'advanced',
      fence: 3n,
    });
  });

  it("a sink's max connection age moves the stream to a new connection: no advance on it fails", async () => {
    // Asked to go away every 300 ms, and closed with whatever it carries 200 ms later.
    const aging = await startFencer([
      'sink',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      `${dir.path}/aging`,
      '--max-connection-age-ms',
      '300',
      '--max-connection-age-grace-ms',
      '200',
    ]);
    const advancing = new GrpcSinkClient({ address: aging.address, token: null, deadlineMs: 2_000 });
    try {
      const kinds = new Map<string, number>();
      // Two advances always in flight, for about ten of the connection's lifetimes.
      const until = performance.now() + 3_000;
      await Promise.all(
        ['one', 'two'].map(async (lane) => {
          for (let token = 1n; performance.now() < until; token++) {
            const outcome = await advancing.advanceFence({ resource: lane, token, grantId: `${token}`, ownerId: null });
            const kind = outcome.kind === 'unavailable' ? outcome.sinkCode : outcome.kind;
            kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
          }
        }),
      );
      expect([...kinds.keys()]).toEqual(['advanced']);
      expect(kinds.get('advanced')).toBeGreaterThan(20);
    } finally {
      advancing.close();
      await stopFencer(aging);
    }
  });

  it('a sink of the shared contract alone (no AdvanceFenceStream) gets the unary AdvanceFence, from then on', async () => {
    const unaryCalls: string[] = [];
    const server = new grpc.Server();
    // Only the unary call: grpc-js answers every other method UNIMPLEMENTED, as such a sink would.
    server.addService(fencing.Sink.service, {
      AdvanceFence: (
        call: grpc.ServerUnaryCall<AdvanceFenceRequest__Output, AdvanceFenceResponse>,
        done: grpc.sendUnaryData<AdvanceFenceResponse>,
      ) => {
        unaryCalls.push(call.request.grant_id);
        done(null, { fence: call.request.token });
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    const older = new GrpcSinkClient({ address: `127.0.0.1:${port}`, token: null, deadlineMs: 2_000 });
    try {
      for (const [token, grantId] of [
        [1n, 'first'],
        [2n, 'second'],
      ] as const) {
        expect(await older.advanceFence({ resource: 'r', token, grantId, ownerId: null })).toEqual({
          kind: 'advanced',
          fence: token,
        });
      }
      expect(unaryCalls).toEqual(['first', 'second']);
    } finally {
      older.close();
      server.forceShutdown();
    }
  });

  it('nothing listening is unavailable (UNAVAILABLE), failing fast without wait-for-ready', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const nowhere = new GrpcSinkClient({ address: `127.0.0.1:${port}`, token: null, deadlineMs: 20_000 });
    try {
      expect(await nowhere.advanceFence({ resource: 'r', token: 1n, grantId: 'g', ownerId: 'alice' })).toEqual({
        kind: 'unavailable',
        sinkCode: 'UNAVAILABLE',
      });
    } finally {
      nowhere.close();
    }
  });
});
