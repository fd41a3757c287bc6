// WriteStream, the project's streamed Write, against a real `fencer sink`
// process with credentials: every message is judged as a unary Write (F1,
// F3, A5, V1–V3) through the same commit path, answered by (resource,
// result_id), and a refused message ends nothing; the caller is refused
// before one message is read (A4, A6); a client that reads no answers
// holds the sink to its window (V4); a stopping sink answers what it read
// and ends the stream UNAVAILABLE. Over a hand-cranked disk, in-process:
// answers overtake one another, and a failed store ends the stream.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencing, type RemoteFailure } from '@fencer/proto';
import {
  CODE,
  eventually,
  gzipBomb,
  logEntries,
  rawStreamCall,
  readOrMissing,
  sinkCalls,
  sinkClient,
  startFencer,
  startSecuredSink,
  stopFencer,
  tempDir,
  writeOutcome,
  writeTestCredentials,
  type FencerProcess,
  type SinkCalls,
} from '@fencer/testkit';
import { SinkEngine } from '../src/core/sink-engine.js';
import { memoryStore } from './doubles/memory-store.js';
import { openWriteStream, serveSinkApi, streamAnswer } from './helpers.js';

const TOKENS = {
  coordinator: 'coordinator-token-ws-0123456789',
  'worker-a': 'worker-a-token-ws-0123456789',
  'worker-b': 'worker-b-token-ws-0123456789',
} as const;
const WRITE_STREAM = '/fencing.v1.Sink/WriteStream';
/** The sink's window (server-kit DEFAULT_STREAM_WINDOW). */
const WINDOW = 256;

let dir: ReturnType<typeof tempDir>;
let sink: FencerProcess;
let coordinator: SinkCalls;
let reader: SinkCalls;
const clients: { close(): void }[] = [];

beforeAll(async () => {
  dir = tempDir('fencer-write-stream-');
  sink = await startSecuredSink(writeTestCredentials(dir.path, TOKENS), join(dir.path, 'data'), {
    args: ['--metrics', '127.0.0.1:0'],
  });
  coordinator = sinkCalls(sink.address, TOKENS.coordinator);
  reader = sinkCalls(sink.address, TOKENS['worker-a']);
  clients.push(coordinator, reader);
});

afterAll(async () => {
  for (const client of clients) client.close();
  if (sink) await stopFencer(sink);
  dir?.remove();
});

/** A WriteStream to the sink as `identity` (no credentials when undefined). */
function stream(identity: keyof typeof TOKENS | undefined) {
  const client = sinkClient(sink.address);
  clients.push(client);
  return openWriteStream(client, identity && TOKENS[identity]);
}

const write = (resource: string, token: string, resultId: string, payload: string | Buffer) => ({
  write: { resource, token, result_id: resultId, payload: Buffer.from(payload) },
});

const advance = (resource: string, token: number, owner: keyof typeof TOKENS) =>
  coordinator.advance({ resource, token: String(token), grant_id: `${resource}-${token}`, owner_id: owner });

/** The sum of a metric's samples (from the sink's /metrics) whose labels include `labels`. */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`http://${String(sink.ready.metrics)}/metrics`)).text();
  let sum = 0;
  for (const [, labelText = '', value] of text.matchAll(new RegExp(`^${name}(?:\\{(.*)\\})? (\\S+)$`, 'gm'))) {
    const has = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
    if (Object.entries(labels).every(([k, v]) => has[k] === v)) sum += Number(value);
  }
  return sum;
}
const streamMessagesRead = () => metric('fencer_rpc_requests_read_total', { method: 'WriteStream' });

describe('per message, as a unary Write', () => {
  it('F1, F3, A5, V1: every outcome on one stream, each answer naming its write, and the stream goes on', async () => {
    await advance('ws', 2, 'worker-a');
    await advance('ws-of-b', 1, 'worker-b');
    const s = stream('worker-a');
    const expectations: [string, ReturnType<typeof write> | object, object][] = [
      ['applied', write('ws', '2', 'r1', 'a'), { outcome: 'APPLIED', code: CODE.OK, fence: '2' }],
      ['replayed (same payload)', write('ws', '2', 'r1', 'a'), { outcome: 'REPLAYED', code: CODE.OK, fence: '2' }],
      ['conflict', write('ws', '2', 'r1', 'b'), { outcome: 'RESULT_CONFLICT', code: CODE.ALREADY_EXISTS }],
      ['stale', write('ws', '1', 'r2', 'a'), { outcome: 'STALE_TOKEN', code: CODE.FAILED_PRECONDITION, fence: '2' }],
      [
        'not issued',
        write('ws', '3', 'r3', 'a'),
        { outcome: 'TOKEN_NOT_ISSUED', code: CODE.FAILED_PRECONDITION, fence: '2' },
      ],
      [
        "another owner's fence",
        write('ws-of-b', '1', 'r4', 'a'),
        { outcome: 'OWNER_MISMATCH', code: CODE.PERMISSION_DENIED, fence: '1' },
      ],
      [
        'invalid fields',
        write('ws', '0', 'r\u0000', 'a'),
        { outcome: 'INVALID_FIELD', code: CODE.INVALID_ARGUMENT, fields: ['token', 'result_id'] },
      ],
      ['no write at all', {}, { outcome: 'INVALID_FIELD', code: CODE.INVALID_ARGUMENT, fields: ['write'] }],
      ['applied after all of that', write('ws', '2', 'r5', 'c'), { outcome: 'APPLIED', code: CODE.OK, fence: '2' }],
    ];
    for (const [what, message, expected] of expectations) {
      const answer = await s.ask(message);
      const sent = (message as { write?: { resource: string; result_id: string } }).write;
      expect({ ...answer, what }).toMatchObject({
        what,
        resource: sent?.resource ?? '',
        resultId: sent?.result_id ?? '',
        ...expected,
      });
    }
    expect(await s.end()).toBe('OK');
    expect((await readOrMissing(reader, 'ws', 'r1'))?.payload.toString()).toBe('a');
    expect((await readOrMissing(reader, 'ws', 'r5'))?.payload.toString()).toBe('c');
    for (const resultId of ['r2', 'r3']) expect(await readOrMissing(reader, 'ws', resultId)).toBeUndefined();
    expect(await readOrMissing(reader, 'ws-of-b', 'r4')).toBeUndefined();
  });

  it('the same commit path as the unary Write: a result stored one way is REPLAYED or a RESULT_CONFLICT the other way', async () => {
    await advance('both-ways', 1, 'worker-a');
    const unary = sinkCalls(sink.address, TOKENS['worker-a']);
    clients.push(unary);
    const s = stream('worker-a');
    const unaryWrite = (resultId: string, payload: string) =>
      writeOutcome(
        unary.write({ resource: 'both-ways', token: '1', result_id: resultId, payload: Buffer.from(payload) }),
      );

    expect(await unaryWrite('u', 'p')).toEqual({ outcome: 'APPLIED', fence: '1' });
    expect(await s.ask(write('both-ways', '1', 'u', 'p'))).toMatchObject({ outcome: 'REPLAYED', fence: '1' });
    expect(await s.ask(write('both-ways', '1', 'u', 'q'))).toMatchObject({ outcome: 'RESULT_CONFLICT' });
    expect(await s.ask(write('both-ways', '1', 's', 'p'))).toMatchObject({ outcome: 'APPLIED', fence: '1' });
    expect(await unaryWrite('s', 'p')).toEqual({ outcome: 'REPLAYED', fence: '1' });
    expect(await unaryWrite('s', 'q')).toEqual({ outcome: 'RESULT_CONFLICT', fence: '' });
    expect(await s.end()).toBe('OK');
  });

  it('V3: a malformed message is refused MALFORMED_MESSAGE alone, naming no write; the writes around it are applied', async () => {
    await advance('v3', 1, 'worker-a');
    const valid = (resultId: string) =>
      fencing.Sink.service.WriteStream.requestSerialize(write('v3', '1', resultId, 'x'));
    // A write (field 1) whose result_id declares 50 bytes and sends 4: a
    // lenient decoder once stored a truncated id.
    const inner = Buffer.concat([
      Buffer.from([0x0a, 2]),
      Buffer.from('v3'),
      Buffer.from([0x10, 1, 0x1a, 50]),
      Buffer.from('v3-b'),
    ]);
    const truncated = Buffer.concat([Buffer.from([0x0a, inner.length]), inner]);
    const { responses, failure } = await rawStreamCall(
      sink.address,
      WRITE_STREAM,
      [{ bytes: valid('v3-a') }, { bytes: truncated }, { bytes: valid('v3-c') }],
      { authorization: `Bearer ${TOKENS['worker-a']}` },
    );
    expect(failure).toBeUndefined();
    const answers = responses.map((bytes) => streamAnswer(fencing.Sink.service.WriteStream.responseDeserialize(bytes)));
    expect(answers).toHaveLength(3);
    expect(answers.filter((a) => a.outcome === 'APPLIED').map((a) => a.resultId)).toEqual(
      expect.arrayContaining(['v3-a', 'v3-c']),
    );
    expect(answers.find((a) => a.outcome !== 'APPLIED')).toEqual({
      resource: '',
      resultId: '',
      outcome: 'MALFORMED_MESSAGE',
      code: CODE.INVALID_ARGUMENT,
      fence: undefined,
      fields: ['write.result_id'],
    });
    expect(await readOrMissing(reader, 'v3', 'v3-b')).toBeUndefined();
    expect(await readOrMissing(reader, 'v3', 'v3')).toBeUndefined();
  });

  it('V4: a message past the bound after decompression is refused MESSAGE_TOO_LARGE alone, logged once; the writes around it are applied', async () => {
    await advance('too-large', 1, 'worker-a');
    const valid = (resultId: string) => ({
      bytes: fencing.Sink.service.WriteStream.requestSerialize(write('too-large', '1', resultId, 'x')),
    });
    // 3 MiB once inflated: past the sink's 2 MiB bound, within grpc-js's backstop at twice it.
    const bomb = gzipBomb(Buffer.alloc(0), 1, 3 * 1024 * 1024);
    const { responses, failure } = await rawStreamCall(
      sink.address,
      WRITE_STREAM,
      [valid('big-a'), bomb, bomb, valid('big-c')],
      { authorization: `Bearer ${TOKENS['worker-a']}` },
    );
    expect(failure).toBeUndefined();
    const answers = responses.map((bytes) => streamAnswer(fencing.Sink.service.WriteStream.responseDeserialize(bytes)));
    expect(answers.filter((a) => a.outcome === 'APPLIED').map((a) => a.resultId)).toEqual(
      expect.arrayContaining(['big-a', 'big-c']),
    );
    expect(answers.filter((a) => a.outcome !== 'APPLIED')).toEqual([
      expect.objectContaining({
        resource: '',
        resultId: '',
        outcome: 'MESSAGE_TOO_LARGE',
        code: CODE.RESOURCE_EXHAUSTED,
      }),
      expect.objectContaining({
        resource: '',
        resultId: '',
        outcome: 'MESSAGE_TOO_LARGE',
        code: CODE.RESOURCE_EXHAUSTED,
      }),
    ]);
    expect(answers).toHaveLength(4);
    // One warning for the offender, not one per refused message.
    const warnings = await eventually(() => {
      const lines = logEntries(sink.stderr()).filter((entry) => entry.reason === 'MESSAGE_TOO_LARGE');
      return lines.length > 0 ? lines : undefined;
    });
    expect(warnings).toEqual([expect.objectContaining({ level: 40, method: 'WriteStream', limit: 2 * 1024 * 1024 })]);
  });

  it('answers many resources at once, each answer matched to its write by resource and result_id', async () => {
    const resources = Array.from({ length: 32 }, (_, i) => `fan-${i}`);
    // Each resource's own fence, so an answer's fence shows which resource it came from.
    await Promise.all(resources.map((resource, i) => advance(resource, i + 1, 'worker-a')));
    const s = stream('worker-a');
    const sent = resources.flatMap((resource, i) =>
      Array.from({ length: 8 }, (_, n) => write(resource, String(i + 1), `fan-result-${n}`, `${resource}#${n}`)),
    );
    const answers = await Promise.all(sent.map((message) => s.ask(message)));
    answers.forEach((answer, n) =>
      expect(answer).toMatchObject({
        resource: sent[n]!.write.resource,
        resultId: sent[n]!.write.result_id,
        outcome: 'APPLIED',
        fence: sent[n]!.write.token,
      }),
    );
    expect(s.answers).toHaveLength(sent.length);
    expect(await s.end()).toBe('OK');
    for (const { write: w } of sent)
      expect((await readOrMissing(reader, w.resource, w.result_id))?.payload.equals(w.payload)).toBe(true);
  });
});

describe('A4, A6: the caller, before any message', () => {
  it.each([
    ['no credentials', {}, CODE.UNAUTHENTICATED, 'UNAUTHENTICATED'],
    ['an unknown token', { authorization: 'Bearer not-a-known-token-000' }, CODE.UNAUTHENTICATED, 'UNAUTHENTICATED'],
    [
      "the coordinator's token (not a worker)",
      { authorization: `Bearer ${TOKENS.coordinator}` },
      CODE.PERMISSION_DENIED,
      'PERMISSION_DENIED',
    ],
  ])('%s: the stream is refused and not one of its messages is read', async (_what, metadata, code, reason) => {
    await advance('refused-streams', 1, 'worker-a');
    const before = await streamMessagesRead();
    const messages = Array.from({ length: 50 }, (_, i) => ({
      bytes: fencing.Sink.service.WriteStream.requestSerialize(write('refused-streams', '1', `m${i}`, 'x')),
    }));
    const { responses, failure } = await rawStreamCall(sink.address, WRITE_STREAM, messages, metadata);
    expect([failure?.code, failure?.reason, responses]).toEqual([code, reason, []]);
    expect(await streamMessagesRead()).toBe(before);
    expect(await readOrMissing(reader, 'refused-streams', 'm0')).toBeUndefined();
  });
});

describe('V4: a client that reads no answers', () => {
  it(`holds the sink to ${WINDOW} messages in flight, then everything is answered once it reads`, async () => {
    await advance('unread', 1, 'worker-a');
    const before = await streamMessagesRead();
    const s = stream('worker-a');
    // Answers of about 500 bytes: the client's 64 KiB HTTP/2 window holds
    // ~130 of them, so the sink soon has nowhere to put more.
    const count = 3_000;
    s.call.pause(); // read nothing: answers stay unread at the transport
    for (let n = 0; n < count; n++) s.send(write('unread', '1', `${n}-`.padEnd(480, 'x'), 'p'));
    await eventually(
      async () =>
        (await metric('fencer_stream_messages_in_flight', { method: 'WriteStream' })) === WINDOW ? true : undefined,
      { what: 'the window to fill' },
    );
    // The sink stopped reading: what it read is the window, what grpc-js
    // buffers for the handler (16) and the answers the client's HTTP/2
    // window took before it filled (~130 of these), far from all 3,000.
    const read = (await streamMessagesRead()) - before;
    expect(read).toBeLessThan(WINDOW + 16 + 200);

    s.call.resume();
    expect(await s.end()).toBe('OK');
    expect(new Set(s.answers.map((a) => a.result_id)).size).toBe(count);
    expect(new Set(s.answers.map((a) => streamAnswer(a).outcome))).toEqual(new Set(['APPLIED']));
    expect(await metric('fencer_stream_messages_in_flight', { method: 'WriteStream' })).toBe(0);
  });
});

describe('a stopping sink', () => {
  it('SIGTERM: the open stream ends UNAVAILABLE after its answers; the sink exits 0; every answered write survives', async () => {
    const data = tempDir('fencer-write-stream-stop-');
    try {
      const process = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', data.path]);
      const admin = sinkCalls(process.address);
      clients.push(admin);
      await admin.advance({ resource: 'stopping', token: '1', grant_id: 'g1' });
      const client = sinkClient(process.address);
      clients.push(client);
      const s = openWriteStream(client);
      // Keep writing through the stop, each write once the previous is answered.
      const answered: string[] = [];
      const writing = (async () => {
        for (let n = 0; ; n++) {
          const answer = await Promise.race([s.ask(write('stopping', '1', `w${n}`, `p${n}`)), s.ended]);
          if (typeof answer !== 'object' || !('outcome' in answer)) return;
          expect(answer.outcome).toBe('APPLIED');
          answered.push(answer.resultId);
        }
      })();
      await eventually(() => (answered.length >= 20 ? true : undefined), { what: '20 answered writes' });
      process.kill('SIGTERM');
      const ended = (await s.ended) as RemoteFailure;
      await writing;
      expect([ended.code, ended.reason]).toEqual([CODE.UNAVAILABLE, 'UNAVAILABLE']);
      expect((await process.exited).code).toBe(0);

      const restarted = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', data.path]);
      const after = sinkCalls(restarted.address);
      try {
        for (const resultId of answered)
          expect((await readOrMissing(after, 'stopping', resultId))?.payload.toString()).toBe(`p${resultId.slice(1)}`);
      } finally {
        after.close();
        await stopFencer(restarted);
      }
    } finally {
      data.remove();
    }
  });
});

describe('over a hand-cranked disk', () => {
  it('answers as writes are decided, not as sent: a refusal overtakes a write held at its sync, across resources', async () => {
    const { store, backend } = memoryStore(undefined, { manualSync: true });
    const server = await serveSinkApi(new SinkEngine(store));
    const admin = sinkCalls(server.address);
    const client = sinkClient(server.address);
    try {
      const advanced = admin.advance({ resource: 'a', token: '1', grant_id: 'g1' });
      await eventually(() => (backend.waitingBatches === 1 ? true : undefined), { what: 'the advance at its sync' });
      backend.syncNext();
      await advanced;

      const s = openWriteStream(client);
      const held = s.ask(write('a', '1', 'held', 'p'));
      await eventually(() => (backend.waitingBatches === 1 ? true : undefined), { what: 'the write at its sync' });
      expect(await s.ask(write('b', '0', 'invalid', 'p'))).toMatchObject({ resource: 'b', outcome: 'INVALID_FIELD' });
      backend.syncNext();
      expect(await held).toMatchObject({ resource: 'a', resultId: 'held', outcome: 'APPLIED' });
      expect(s.answers.map((a) => a.result_id)).toEqual(['invalid', 'held']);
      expect(await s.end()).toBe('OK');
    } finally {
      admin.close();
      client.close();
      await server.stop();
    }
  });

  it('fail-stop: a store failure ends the stream STORAGE_UNAVAILABLE (T3), with no answer for the writes it held', async () => {
    const { store, backend } = memoryStore(undefined, { manualSync: true });
    const server = await serveSinkApi(new SinkEngine(store));
    const admin = sinkCalls(server.address);
    const client = sinkClient(server.address);
    try {
      const advanced = admin.advance({ resource: 'r', token: '1', grant_id: 'g1' });
      await eventually(() => (backend.waitingBatches === 1 ? true : undefined), { what: 'the advance at its sync' });
      backend.syncNext();
      await advanced;

      const s = openWriteStream(client);
      s.send(write('r', '1', 'x', 'p'));
      s.send(write('r', '1', 'y', 'p'));
      await eventually(() => (store.stats.commits === 3 ? true : undefined), { what: 'both writes committed' });
      backend.failNext();
      const ended = (await s.ended) as RemoteFailure;
      expect([ended.code, ended.reason]).toEqual([CODE.UNAVAILABLE, 'STORAGE_UNAVAILABLE']);
      expect(s.answers).toEqual([]);
      expect(backend.disk.results.size).toBe(0);
    } finally {
      admin.close();
      client.close();
      await server.stop();
    }
  });
});
