// SinkConnection.writeStream() against real `fencer sink` processes: each
// write's receipt or typed error is exactly what a unary Write gives, answers
// find their own writes across resources, writes of one result id wait for
// each other, a refused stream rejects its writes as a unary call would, and
// a sink killed mid-stream (SIGKILL) leaves every unanswered write an
// UnavailableError while every answered one is on disk, byte for byte; the
// same stream object then writes to the restarted sink.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  readOrMissing,
  sinkCalls,
  startFencer,
  startSecuredSink,
  stopFencer,
  tempDir,
  writeTestCredentials,
  type FencerProcess,
} from '@fencer/testkit';
import { fencing } from '@fencer/proto';
import {
  AuthError,
  FencerError,
  SinkConnection,
  UnavailableError,
  type SentCall,
  type WriteFields,
  type WriteReceipt,
} from '../src/index.js';

const TOKENS = {
  coordinator: 'coordinator-token-cws-0123456789',
  'worker-a': 'worker-a-token-cws-0123456789',
  'worker-b': 'worker-b-token-cws-0123456789',
} as const;

const opened: { close(): void }[] = [];
const processes: FencerProcess[] = [];
const dirs: ReturnType<typeof tempDir>[] = [];
afterAll(async () => {
  for (const connection of opened.splice(0)) connection.close();
  for (const process of processes.splice(0)) await stopFencer(process);
  for (const dir of dirs.splice(0)) dir.remove();
});

function connect(address: string, token?: string, observer?: (call: SentCall) => void, writeStream = true) {
  const sink = new SinkConnection({
    address,
    writeStream,
    ...(token === undefined ? {} : { token }),
    ...(observer ? { observer: (call: SentCall) => (observer(call), () => undefined) } : {}),
  });
  opened.push(sink);
  return sink;
}

/** How a write ended, comparable across unary and stream: the receipt, or the error's class and fields. */
async function settled(pending: Promise<WriteReceipt>) {
  try {
    return { receipt: await pending };
  } catch (error) {
    if (!(error instanceof FencerError)) throw error;
    const { name, code, reason, details, fieldViolations, retryable } = error;
    return { error: { name, code, reason, details, fieldViolations, retryable } };
  }
}

const request = (resource: string, token: bigint, resultId: string, payload: string | Buffer): WriteFields => ({
  resource,
  token,
  resultId,
  payload: Buffer.from(payload),
});

describe('against a sink with credentials', () => {
  let sink: FencerProcess;
  const advance = (resource: string, token: bigint, owner: string) =>
    sinkCalls(sink.address, TOKENS.coordinator).advance({
      resource,
      token: token.toString(),
      grant_id: `${resource}-${token}`,
      owner_id: owner,
    });

  beforeAll(async () => {
    const dir = tempDir('fencer-client-write-stream-');
    dirs.push(dir);
    sink = await startSecuredSink(writeTestCredentials(dir.path, TOKENS), join(dir.path, 'data'));
    processes.push(sink);
  });

  it('every receipt and typed error is the one a unary Write gives (F1, F3, A5, V1), and the stream goes on', async () => {
    await advance('typed', 3n, 'worker-a');
    await advance('typed-of-b', 1n, 'worker-b');
    const sent: SentCall[] = [];
    const connection = connect(sink.address, TOKENS['worker-a'], (call) => sent.push(call));
    const stream = connection.writeStream();
    const unary = connect(sink.address, TOKENS['worker-a'], undefined, false);
    const cases: [string, (id: string) => WriteFields][] = [
      ['applied', (id) => request('typed', 3n, id, 'a')],
      ['stale (LeaseLostError with the fence)', (id) => request('typed', 2n, id, 'a')],
      ['never issued', (id) => request('typed', 4n, id, 'a')],
      ["another owner's fence (A5)", (id) => request('typed-of-b', 1n, id, 'a')],
      ['invalid fields', (id) => request('typed', 0n, `${id}\u0000`, 'a')],
      ['payload over the limit', (id) => request('typed', 3n, id, Buffer.alloc(1024 * 1024 + 1))],
    ];
    for (const [what, make] of cases) {
      const viaUnary = await settled(unary.write(make(`unary-${what}`)));
      const viaStream = await settled(stream.write(make(`stream-${what}`)));
      expect({ what, ...viaStream }).toEqual({ what, ...viaUnary });
    }
    // Same result id, same and then another payload: REPLAYED, then RESULT_CONFLICT, both ways.
    await unary.write(request('typed', 3n, 'shared', 'x'));
    expect(await settled(stream.write(request('typed', 3n, 'shared', 'x')))).toEqual(
      await settled(unary.write(request('typed', 3n, 'shared', 'x'))),
    );
    expect(await settled(stream.write(request('typed', 3n, 'shared', 'y')))).toEqual(
      await settled(unary.write(request('typed', 3n, 'shared', 'y'))),
    );
    expect(await stream.write(request('typed', 3n, 'after-all-that', 'z'))).toEqual({ outcome: 'applied', fence: 3n });
    // The observer sees each streamed write as a Write.
    expect(sent.filter((call) => call.streamed).map((call) => call.method)).toEqual(
      Array.from({ length: cases.length + 3 }, () => 'Write'),
    );
  });

  it('answers many resources at once, each receipt to its own write', async () => {
    const resources = Array.from({ length: 16 }, (_, i) => ({ resource: `many-${i}`, token: BigInt(i + 1) }));
    await Promise.all(resources.map(({ resource, token }) => advance(resource, token, 'worker-a')));
    const stream = connect(sink.address, TOKENS['worker-a']).writeStream();
    const writes = resources.flatMap(({ resource, token }) =>
      Array.from({ length: 20 }, (_, n) => request(resource, token, `r${n}`, `${resource}/${n}`)),
    );
    const receipts = await Promise.all(writes.map((write) => stream.write(write)));
    // Each resource's fence is its own, so a receipt given to another resource's write would show.
    expect(receipts.map((receipt) => receipt.fence)).toEqual(writes.map((write) => write.token));
    expect(new Set(receipts.map((receipt) => receipt.outcome))).toEqual(new Set(['applied']));
  });

  it('writes of one result id in flight at once go one after the other: applied, then replayed or a conflict', async () => {
    await advance('same-id', 1n, 'worker-a');
    const stream = connect(sink.address, TOKENS['worker-a']).writeStream();
    const outcomes = await Promise.all([
      settled(stream.write(request('same-id', 1n, 'once', 'p'))),
      settled(stream.write(request('same-id', 1n, 'once', 'p'))),
      settled(stream.write(request('same-id', 1n, 'once', 'q'))),
      // Sent after a refused one: a refusal is that write's alone.
      settled(stream.write(request('same-id', 1n, 'once', 'p'))),
    ]);
    expect(outcomes.map((o) => o.receipt?.outcome ?? o.error?.reason)).toEqual([
      'applied',
      'replayed',
      'RESULT_CONFLICT',
      'replayed',
    ]);
  });

  it('a stream refused for its credentials rejects its writes with AuthError (not retryable), as a unary Write would', async () => {
    await advance('unknown-caller', 1n, 'worker-a');
    const connection = connect(sink.address, 'not-a-known-token-0000');
    const write = request('unknown-caller', 1n, 'w', 'p');
    const [viaStream, again] = await Promise.all([
      settled(connection.writeStream().write(write)),
      settled(connection.writeStream().write({ ...write, resultId: 'w2' })),
    ]);
    expect(viaStream.error).toMatchObject({ name: 'AuthError', reason: 'UNAUTHENTICATED', retryable: false });
    expect(again.error).toMatchObject({ name: 'AuthError', reason: 'UNAUTHENTICATED' });
    expect((await settled(connection.write(write))).error).toMatchObject({
      name: 'AuthError',
      reason: 'UNAUTHENTICATED',
    });
    // A new stream is opened for the next write, and refused the same way.
    await expect(connection.writeStream().write(write)).rejects.toBeInstanceOf(AuthError);
  });
});

/** A payload whose size and bytes follow from its id, so any tear or mix-up shows. */
function payloadFor(id: string): Buffer {
  const size = 1 + (Number.parseInt(createHash('sha256').update(id).digest('hex').slice(0, 6), 16) % 40_000);
  return Buffer.alloc(size, createHash('sha256').update(`payload:${id}`).digest());
}

describe('a sink killed mid-stream (F6, S5)', () => {
  const started: FencerProcess[] = [];
  afterEach(async () => {
    for (const process of started.splice(0)) await stopFencer(process);
  });

  it('every answered write survives byte for byte, every unanswered one is an UnavailableError, and the stream goes on after the restart', async () => {
    const dir = tempDir('fencer-client-stream-kill-');
    dirs.push(dir);
    const start = async (listen = '127.0.0.1:0') => {
      const process = await startFencer(['sink', '--insecure', '--listen', listen, '--data', dir.path]);
      started.push(process);
      return process;
    };
    const first = await start();
    await sinkCalls(first.address).advance({ resource: 'killed', token: '1', grant_id: 'g1' });
    const stream = connect(first.address).writeStream();

    const answered = new Map<string, WriteReceipt>();
    const failed = new Map<string, unknown>();
    let killed = false;
    // Eight writers share the one stream, each sending its next write once the last is answered.
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let n = 0; !killed; n++) {
        const resultId = `w${w}-${n}`;
        try {
          answered.set(resultId, await stream.write(request('killed', 1n, resultId, payloadFor(resultId))));
        } catch (error) {
          failed.set(resultId, error);
        }
      }
    });
    await eventually(() => (answered.size >= 300 ? true : undefined), { timeoutMs: 20_000, what: '300 answers' });
    first.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    killed = true;
    await Promise.all(writers);

    expect(failed.size).toBeGreaterThan(0); // killed with writes in flight
    for (const [resultId, error] of failed) {
      expect(error, resultId).toBeInstanceOf(UnavailableError);
      expect((error as UnavailableError).retryable).toBe(true);
    }
    const second = await start(first.address);
    const reader = sinkCalls(second.address);
    try {
      for (const [resultId, receipt] of answered) {
        expect(receipt, resultId).toEqual({ outcome: 'applied', fence: 1n });
        const found = await readOrMissing(reader, 'killed', resultId);
        expect(found?.payload.equals(payloadFor(resultId)), resultId).toBe(true);
      }
      // The same stream object reconnects, and retrying an unanswered write
      // with its result id is safe: applied if it never landed, replayed if it did.
      for (const resultId of failed.keys()) {
        const retried = await stream.write(request('killed', 1n, resultId, payloadFor(resultId)));
        expect(['applied', 'replayed']).toContain(retried.outcome);
        expect((await readOrMissing(reader, 'killed', resultId))?.payload.equals(payloadFor(resultId))).toBe(true);
      }
    } finally {
      reader.close();
    }
  });
});

describe('a sink that stops answering (SIGSTOP)', () => {
  const started: FencerProcess[] = [];
  afterEach(async () => {
    for (const process of started.splice(0)) {
      process.kill('SIGCONT');
      await stopFencer(process);
    }
  });

  /** A fresh `--insecure` sink of this test's own, with `resource`'s fence at 1. */
  async function sinkFencing(resource: string, flags: readonly string[] = []): Promise<FencerProcess> {
    const dir = tempDir(`fencer-client-stream-${resource}-`);
    dirs.push(dir);
    const sink = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', dir.path, ...flags]);
    started.push(sink);
    const calls = sinkCalls(sink.address);
    await calls.advance({ resource, token: '1', grant_id: 'g1' });
    calls.close();
    return sink;
  }

  it('a stream busy for longer than the call timeout lives on; a write unanswered past it fails the stream, and the next write opens a new one', async () => {
    const sink = await sinkFencing('paused');
    const connection = new SinkConnection({ address: sink.address, callTimeoutMs: 400 });
    opened.push(connection);
    const stream = connection.writeStream();

    // Answered writes for three call timeouts: none of them is overdue, so nothing fails.
    const busyUntil = performance.now() + 1_200;
    for (let n = 0; performance.now() < busyUntil; n++) {
      expect(await stream.write(request('paused', 1n, `busy-${n}`, 'x'))).toEqual({ outcome: 'applied', fence: 1n });
    }

    sink.kill('SIGSTOP');
    const sentAt = performance.now();
    const failureOf = (pending: Promise<WriteReceipt>) =>
      pending.then(
        () => undefined,
        (error: unknown) => error,
      );
    const first = failureOf(stream.write(request('paused', 1n, 'stopped-1', 'x')));
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = failureOf(stream.write(request('paused', 1n, 'stopped-2', 'x')));
    const failures = [await first, await second];
    // Both fail together, once the first is overdue: the stream as a whole is broken.
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(400);
    for (const error of failures) {
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as UnavailableError).retryable).toBe(true);
      expect((error as UnavailableError).code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect((error as UnavailableError).message).toContain('no answer to a write within 400 ms');
    }

    sink.kill('SIGCONT');
    // The same result ids again, on a new stream: applied if they never landed, replayed if they did (F3).
    for (const resultId of ['stopped-1', 'stopped-2']) {
      const retried = await stream.write(request('paused', 1n, resultId, 'x'));
      expect(['applied', 'replayed']).toContain(retried.outcome);
    }
  });

  it("SinkConnection.write sends WriteStream messages by default: a write's own shorter deadline ends it alone, and it may still land", async () => {
    const sink = await sinkFencing('bounded');
    const trail: string[] = [];
    const observer = (call: SentCall) => (outcome: { ok: boolean; error?: FencerError }) =>
      trail.push(`${call.streamed ? 'streamed' : 'unary'} ${outcome.ok ? 'ok' : grpc.status[outcome.error!.code]}`);
    const connection = new SinkConnection({ address: sink.address, callTimeoutMs: 5_000, observer });
    opened.push(connection);

    expect(await connection.write(request('bounded', 1n, 'before', 'x'))).toEqual({ outcome: 'applied', fence: 1n });
    sink.kill('SIGSTOP');
    const late = await connection
      .write(request('bounded', 1n, 'paused', 'x'), { timeoutMs: 200 })
      .catch((error: unknown) => error);
    expect(late).toBeInstanceOf(UnavailableError);
    expect((late as UnavailableError).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    sink.kill('SIGCONT');
    // The stream was not failed by one write's own deadline; the write was sent, and landed once the sink ran on.
    expect(await connection.write(request('bounded', 1n, 'after', 'x'))).toEqual({ outcome: 'applied', fence: 1n });
    expect(await connection.write(request('bounded', 1n, 'paused', 'x'))).toEqual({ outcome: 'replayed', fence: 1n });
    // A signal already aborted sends nothing.
    const aborted = await connection
      .write(request('bounded', 1n, 'never', 'x'), { signal: AbortSignal.abort() })
      .catch((error: unknown) => error);
    expect((aborted as FencerError).code).toBe(grpc.status.CANCELLED);
    const reader = sinkCalls(sink.address);
    expect(await readOrMissing(reader, 'bounded', 'never')).toBeUndefined();
    reader.close();

    expect(trail).toEqual([
      'streamed ok',
      'streamed DEADLINE_EXCEEDED',
      'streamed ok',
      'streamed ok',
      'streamed CANCELLED',
    ]);
  });

  it("a sink's max connection age moves the stream to a new connection: no write on it fails", async () => {
    // Asked to go away every 300 ms, and closed with whatever it carries 200 ms later.
    const sink = await sinkFencing('aging', ['--max-connection-age-ms', '300', '--max-connection-age-grace-ms', '200']);
    const stream = connect(sink.address).writeStream();
    const outcomes = new Map<string, number>();
    // Two writes always in flight, for about ten of the connection's lifetimes.
    const until = performance.now() + 3_000;
    await Promise.all(
      ['one', 'two'].map(async (lane) => {
        for (let n = 0; performance.now() < until; n++) {
          const ended = await settled(stream.write(request('aging', 1n, `${lane}-${n}`, 'x')));
          const outcome = ended.receipt?.outcome ?? ended.error?.name ?? '?';
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        }
      }),
    );
    expect([...outcomes.keys()]).toEqual(['applied']);
  });
});

describe('a sink of the shared contract alone (no WriteStream)', () => {
  it('gets the refused write again at once as a unary Write, and unary Writes from then on', async () => {
    // A stand-in sink on a real socket serving only the unary Write; grpc-js answers the rest UNIMPLEMENTED.
    const received: string[] = [];
    const server = new grpc.Server();
    const Write: grpc.handleUnaryCall<{ result_id: string; token: string }, object> = (call, callback) => {
      received.push(call.request.result_id);
      callback(null, { outcome: 'APPLIED', fence: call.request.token });
    };
    server.addService(fencing.Sink.service, { Write });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    opened.push({ close: () => server.forceShutdown() });
    const trail: string[] = [];
    const connection = new SinkConnection({
      address: `127.0.0.1:${port}`,
      observer: (call) => (outcome) =>
        trail.push(`${call.streamed ? 'streamed' : 'unary'} ${outcome.ok ? 'ok' : grpc.status[outcome.error.code]}`),
    });
    opened.push(connection);

    expect(await connection.write(request('r', 2n, 'one', 'x'))).toEqual({ outcome: 'applied', fence: 2n });
    expect(await connection.write(request('r', 2n, 'two', 'x'))).toEqual({ outcome: 'applied', fence: 2n });
    // The stream is tried once; the stand-in never saw the refused message, only the unary calls.
    expect(trail).toEqual(['streamed UNIMPLEMENTED', 'unary ok', 'unary ok']);
    expect(received).toEqual(['one', 'two']);
  });
});
