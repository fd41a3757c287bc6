// Message streams (messageStreamFactory) from a real grpc-js client against
// a real server on 127.0.0.1:0, with handlers the test controls: a refusal
// answers one message and the stream goes on; a bug ends the stream
// INTERNAL with a bare message; the role is checked before any message is
// read (A4, A6); at most `window` messages are handled unanswered (V4); a
// stopping server answers what it read, then ends the stream UNAVAILABLE.
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  fencing,
  remoteFailure,
  remoteFailureOfStatus,
  SERVICE_NAMES,
  statusMessage,
  type RemoteFailure,
  type SinkClient,
  type WriteStreamRequest,
  type WriteStreamResponse__Output,
} from '@fencer/proto';
import { credentialsAuthenticator } from './auth.js';
import { Failure } from './failure.js';
import { messageStreamFactory, OpenStreams } from './message-stream.js';
import { registry } from './metrics.js';
import { startGrpcServer, type RunningServer } from './server.js';
import type { Reason } from '@fencer/common';
import { eventually } from '@fencer/testkit';

const WORKER = 'worker-token-0123456789';
const COORDINATOR = 'coordinator-token-0123';
const WINDOW = 4;
const logLines: string[] = [];
const log = pino(
  { level: 'info' },
  new Writable({ write: (chunk, _encoding, done) => (logLines.push(String(chunk)), done()) }),
);

/** Messages the handler took, by result_id, and the releases of those it holds. */
const handled: string[] = [];
const held: (() => void)[] = [];

interface Message {
  write?: { resource: string; result_id: string } | null;
}

/** A server whose WriteStream handler does what each message's resource says. */
async function serve(): Promise<RunningServer> {
  const streams = new OpenStreams();
  const authenticator = credentialsAuthenticator([
    { token: WORKER, identity: 'w1', role: 'worker' },
    { token: COORDINATOR, identity: 'c', role: 'coordinator' },
  ]);
  const messageStream = messageStreamFactory({ service: 'stream-test', log, streams, authenticator, window: WINDOW });
  const WriteStream = messageStream<Message, object>('WriteStream', ['worker'], {
    handle: async ({ write }) => {
      const { resource, result_id } = write!;
      handled.push(result_id);
      if (resource.startsWith('refuse:')) throw new Failure(resource.slice(7) as Reason, `refused ${result_id}`);
      // A bug: a plain Error whose message holds internals.
      if (resource === 'bug') throw new Error('ENOENT: /var/lib/secret-path/LOCK');
      if (resource === 'hold') await new Promise<void>((resolve) => held.push(resolve));
      return { resource, result_id, written: { outcome: 'APPLIED', fence: '1' } };
    },
    refuse: (message, status) => ({
      resource: message?.write?.resource ?? '',
      result_id: message?.write?.result_id ?? '',
      refused: statusMessage(status),
    }),
  });
  return startGrpcServer({
    serviceName: SERVICE_NAMES.sink,
    listen: '127.0.0.1:0',
    definition: fencing.Sink.service,
    handlers: { WriteStream },
    streams,
    authenticator,
    maxReceiveMessageBytes: 1024 * 1024,
    log,
  });
}

let server: RunningServer;
let client: SinkClient;

beforeAll(async () => {
  server = await serve();
  client = new fencing.Sink(server.address, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client.close();
  await server.stop(0);
});

/** One WriteStream: what it sends, the answers it got, and how it ended. */
function open(on: SinkClient = client, token = WORKER) {
  const call = on.WriteStream(bearer(token));
  const answers: WriteStreamResponse__Output[] = [];
  call.on('data', (answer: WriteStreamResponse__Output) => answers.push(answer));
  const ended = new Promise<RemoteFailure | 'OK'>((resolve) => {
    call.on('error', (error: grpc.ServiceError) => resolve(remoteFailure(error)));
    call.on('end', () => resolve('OK'));
  });
  return {
    call,
    answers,
    ended,
    send: (resource: string, resultId: string) =>
      call.write({ write: { resource, token: '1', result_id: resultId } } satisfies WriteStreamRequest),
    /** Resolves once `count` answers have arrived. */
    answered: (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (answers.length >= count ? (call.off('data', check), resolve()) : undefined);
        call.on('data', check);
        check();
      }),
  };
}

/** Waits (bounded) until `condition` holds. */
const until = (condition: () => boolean | Promise<boolean>, what: string) =>
  eventually(async () => ((await condition()) ? true : undefined), { what });

async function counted(name: string, labels: Record<string, string>): Promise<number> {
  const { values } = await registry.getSingleMetric(name)!.get();
  return values
    .filter((v) => Object.entries(labels).every(([key, value]) => v.labels[key] === value))
    .reduce((sum, v) => sum + v.value, 0);
}
const streamMessagesRead = () => counted('fencer_rpc_requests_read_total', { method: 'WriteStream' });

describe('one message, one answer', () => {
  it('a refusal answers its message with the status a unary call would end with, and the stream goes on', async () => {
    const stream = open();
    stream.send('ok', 'm1');
    stream.send('refuse:STALE_TOKEN', 'm2');
    stream.send('refuse:INVALID_FIELD', 'm3');
    stream.send('ok', 'm4');
    stream.call.end();
    expect(await stream.ended).toBe('OK');
    const byId = new Map(stream.answers.map((a) => [a.result_id, a]));
    expect([...byId.keys()].sort()).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(byId.get('m1')).toMatchObject({ resource: 'ok', answer: 'written' });
    expect(byId.get('m4')).toMatchObject({ resource: 'ok', answer: 'written' });
    const stale = remoteFailureOfStatus(byId.get('m2')!.refused!);
    expect([stale.code, stale.reason, stale.message]).toEqual([
      grpc.status.FAILED_PRECONDITION,
      'STALE_TOKEN',
      'refused m2',
    ]);
    const invalid = remoteFailureOfStatus(byId.get('m3')!.refused!);
    expect([invalid.code, invalid.reason]).toEqual([grpc.status.INVALID_ARGUMENT, 'INVALID_FIELD']);
    expect(await counted('fencer_rpc_calls_total', { service: 'stream-test', code: 'FAILED_PRECONDITION' })).toBe(1);
  });

  it('a bug ends the stream INTERNAL with a bare message; the internals reach the log only', async () => {
    const stream = open();
    stream.send('ok', 'before-bug');
    await stream.answered(1);
    stream.send('bug', 'bug');
    const ended = await stream.ended;
    expect(ended).not.toBe('OK');
    const failure = ended as RemoteFailure;
    expect([failure.code, failure.reason, failure.message]).toEqual([
      grpc.status.INTERNAL,
      'INTERNAL',
      'internal error',
    ]);
    expect(stream.answers.map((a) => a.result_id)).toEqual(['before-bug']);
    expect(JSON.stringify(failure)).not.toContain('secret-path');
    expect(logLines.some((line) => line.includes('secret-path'))).toBe(true);
  });
});

describe('before any message is read (A4, A6)', () => {
  it.each([
    ['an unknown token', 'not-a-known-token-000', grpc.status.UNAUTHENTICATED, 'UNAUTHENTICATED'],
    ["the coordinator's token (role not admitted)", COORDINATOR, grpc.status.PERMISSION_DENIED, 'PERMISSION_DENIED'],
  ])('%s: the stream is refused and none of its messages is read', async (_what, token, code, reason) => {
    const before = { read: await streamMessagesRead(), handled: handled.length };
    const stream = open(client, token);
    for (let i = 0; i < 20; i++) stream.send('ok', `refused-${i}`);
    const failure = (await stream.ended) as RemoteFailure;
    expect([failure.code, failure.reason]).toEqual([code, reason]);
    expect(stream.answers).toEqual([]);
    expect(await streamMessagesRead()).toBe(before.read);
    expect(handled.length).toBe(before.handled);
  });
});

describe('V4: the window', () => {
  it(`reads on, but handles at most ${WINDOW} messages unanswered; each answer lets one more in`, async () => {
    const before = { read: await streamMessagesRead(), handled: handled.length };
    const stream = open();
    for (let i = 0; i < 10; i++) stream.send('hold', `held-${i}`);
    // All ten read off the wire (grpc-js buffers a few for the handler),
    // yet only the window's worth handed to the handler.
    await until(async () => (await streamMessagesRead()) - before.read === 10, 'ten messages read');
    await until(() => handled.length - before.handled === WINDOW, 'the window handled');
    expect(await counted('fencer_stream_messages_in_flight', { service: 'stream-test', method: 'WriteStream' })).toBe(
      WINDOW,
    );
    held.shift()!();
    await stream.answered(1);
    await until(() => handled.length - before.handled === WINDOW + 1, 'one more handled');
    // Let the rest through: every message answered, the stream ends OK.
    stream.call.end();
    await until(() => {
      held.splice(0).forEach((release) => release());
      return stream.answers.length === 10;
    }, 'every message answered');
    expect(await stream.ended).toBe('OK');
    expect(new Set(stream.answers.map((a) => a.result_id)).size).toBe(10);
    expect(await counted('fencer_stream_messages_in_flight', { service: 'stream-test' })).toBe(0);
  });
});

describe('stopping the server', () => {
  it('answers the messages it read, then ends the stream UNAVAILABLE, without waiting out the grace', async () => {
    const stopping = await serve();
    const other = new fencing.Sink(stopping.address, grpc.credentials.createInsecure());
    try {
      const stream = open(other);
      const before = handled.length;
      stream.send('hold', 'in-flight');
      await until(() => handled.length === before + 1, 'the held message handled');
      const stopped = stopping.stop(60_000);
      held.shift()!();
      const failure = (await stream.ended) as RemoteFailure;
      expect([failure.code, failure.reason]).toEqual([grpc.status.UNAVAILABLE, 'UNAVAILABLE']);
      expect(stream.answers.map((a) => [a.result_id, a.answer])).toEqual([['in-flight', 'written']]);
      await stopped;
    } finally {
      other.close();
    }
  });
});
