// unaryCall against a real grpc-js server on 127.0.0.1:0: responses and
// metadata pass through, a deadline ends the call DEADLINE_EXCEEDED, an
// AbortSignal (even one aborted before the call) ends it CANCELLED, and no
// abort listener outlives its call.
import { getEventListeners } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  fencing,
  unaryCall,
  type GetFenceRequest,
  type GetFenceResponse__Output,
  type SinkClient,
} from '@fencer/proto';

let server: grpc.Server;
let client: SinkClient;
const getFenceCalls: string[] = [];
const hang = new Set<() => void>();

beforeAll(async () => {
  server = new grpc.Server();
  server.addService(fencing.Sink.service, {
    // Answers with the caller's authorization header, or never for resource "hang".
    GetFence: (call: grpc.ServerUnaryCall<GetFenceRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      getFenceCalls.push(call.request.resource ?? '');
      if (call.request.resource === 'hang') {
        hang.add(() => callback(null, { fence: '0' }));
        return;
      }
      callback(null, { fence: String(call.metadata.get('authorization')[0] ?? 'none').length });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  client = new fencing.Sink(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});

afterAll(() => {
  for (const answer of hang) answer();
  client.close();
  server.forceShutdown();
});

const getFence = (resource: string, options?: Parameters<typeof unaryCall>[3]) =>
  unaryCall<GetFenceRequest, GetFenceResponse__Output>(client, client.GetFence, { resource }, options);

async function codeOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (error) {
    return (error as grpc.ServiceError).code;
  }
  throw new Error('expected the call to fail');
}

describe('unaryCall', () => {
  it('resolves with the response and sends the given metadata', async () => {
    expect((await getFence('r', { metadata: bearer('t') })).fence).toBe(String('Bearer t'.length));
  });

  it('a deadline ends a call the server never answers: DEADLINE_EXCEEDED', async () => {
    expect(await codeOf(getFence('hang', { timeoutMs: 50 }))).toBe(grpc.status.DEADLINE_EXCEEDED);
  });

  it('aborting the signal cancels a call in flight: CANCELLED', async () => {
    const abort = new AbortController();
    const call = getFence('hang', { signal: abort.signal });
    const before = hang.size;
    await new Promise<void>((resolve) => {
      const poll = () => (hang.size > before ? resolve() : setImmediate(poll));
      poll();
    });
    abort.abort();
    expect(await codeOf(call)).toBe(grpc.status.CANCELLED);
  });

  it('a signal aborted before the call: CANCELLED, and the request is never sent', async () => {
    const calls = getFenceCalls.length;
    expect(await codeOf(getFence('r', { signal: AbortSignal.abort() }))).toBe(grpc.status.CANCELLED);
    // The server never answered it: a later call is the next one it sees.
    await getFence('after');
    expect(getFenceCalls.slice(calls)).toEqual(['after']);
  });

  it('leaves no abort listener behind, whether the call succeeded or failed', async () => {
    const abort = new AbortController();
    for (let i = 0; i < 5; i++) await getFence('r', { signal: abort.signal });
    await codeOf(getFence('hang', { signal: abort.signal, timeoutMs: 20 }));
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
  });
});
