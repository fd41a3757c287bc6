// The gRPC SinkPort against a real sink process: F4 outcomes become
// advanced/regression, every transport failure becomes unavailable with the
// gRPC code name, and calls are bounded by the sink deadline.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';
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
