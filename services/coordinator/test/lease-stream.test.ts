// LeaseStream, the project's streamed Acquire/Renew/Release, against a
// coordinator serving over real gRPC with credentials, in front of a real
// `fencer sink` process, driven by @fencer/proto's MessageStream (what the
// worker library sends with): every message is judged as its unary call
// (L2–L5, R1, A3, V1) by the same functions, answered by its call_id, and a
// refused message ends nothing; only a worker may open one, refused before
// one message is read (A4); a stream whose credential a reload removed ends
// at its next message, which is not handled (A7).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  MessageStream,
  remoteFailureOfStatus,
  type LeaseStreamRequest,
  type LeaseStreamResponse__Output,
  type StreamFailure,
} from '@fencer/proto';
import { CODE, coordinatorApi, coordinatorClient, ok, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';
import { fresh, startSinkProcess, startTestCoordinator, writeCredentials } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let creds: ReturnType<typeof writeCredentials>;
let sinkProcess: FencerProcess;
let started: Awaited<ReturnType<typeof startTestCoordinator>>;
const closers: (() => void)[] = [];

beforeAll(async () => {
  dir = tempDir();
  creds = writeCredentials(dir.path);
  sinkProcess = await startSinkProcess(join(dir.path, 'sink'), { credentials: creds.file });
  started = await startTestCoordinator(sinkProcess.address, {
    credentials: creds.file,
    sinkTokenFile: creds.tokenFile('coordinator'),
  });
});

afterAll(async () => {
  for (const close of closers) close();
  await started?.coordinator.stop();
  started?.remove();
  if (sinkProcess) await stopFencer(sinkProcess);
  dir?.remove();
});

/** A LeaseStream as `identity`; `ask` resolves with an answer's outcome, or rejects with the stream's failure. */
function leaseStream(identity: 'alice' | 'bob' | 'ops') {
  const client = coordinatorClient(started.coordinator.address);
  const messages = new MessageStream<LeaseStreamRequest, LeaseStreamResponse__Output>({
    open: () => client.LeaseStream(bearer(creds.tokens[identity])),
    timeoutMs: 10_000,
    keyOfAnswer: (answer) => answer.call_id,
    noun: 'lease call',
  });
  closers.push(() => {
    messages.end();
    client.close();
  });
  let lastId = 0;
  return async (call: Omit<LeaseStreamRequest, 'call_id'>) => {
    const callId = String(++lastId);
    const answer = await messages.send(callId, { ...call, call_id: callId });
    expect(answer.call_id).toBe(callId);
    if (!answer.refused) return { answer: answer.answer, ...(answer.acquired ?? answer.renewed ?? answer.released) };
    const failure = remoteFailureOfStatus(answer.refused);
    const fields = failure.fieldViolations.map((violation) => violation.field);
    return { answer: 'refused', code: failure.code, reason: failure.reason, fields };
  };
}

const acquire = (resource: string, owner: string, requestId = fresh('req')) => ({
  acquire: { request_id: requestId, resource, owner_id: owner, incarnation: '1', ttl_ms: '60000' },
});
const holder = (resource: string, owner: string, token: string) => ({
  resource,
  owner_id: owner,
  incarnation: '1',
  token,
});

describe('LeaseStream: each message is its unary call', () => {
  it('grants, refuses, renews and releases on one stream; a refused message ends nothing', async () => {
    const alice = leaseStream('alice');
    const bob = leaseStream('bob');
    const resource = fresh('stream');

    const granted = await alice(acquire(resource, 'alice'));
    expect(granted).toMatchObject({ answer: 'acquired', replayed: false, lease: { resource, owner_id: 'alice' } });
    const token = (granted as { lease: { token: string } }).lease.token;
    // L2: held by alice.
    expect(await bob(acquire(resource, 'bob'))).toMatchObject({
      answer: 'refused',
      code: CODE.ABORTED,
      reason: 'LEASE_HELD',
    });
    // A3: alice's credential cannot ask as bob.
    expect(await alice(acquire(fresh('other'), 'bob'))).toMatchObject({
      answer: 'refused',
      code: CODE.PERMISSION_DENIED,
    });
    // V1: a message with no call names the field.
    expect(await alice({})).toEqual({
      answer: 'refused',
      code: CODE.INVALID_ARGUMENT,
      reason: 'INVALID_FIELD',
      fields: ['call'],
    });
    // The same stream goes on: L4, then L5.
    expect(await alice({ renew: { ...holder(resource, 'alice', token), ttl_ms: '30000' } })).toMatchObject({
      answer: 'renewed',
      lease: { token, ttl_ms: '30000' },
    });
    expect(await alice({ release: holder(resource, 'alice', token) })).toEqual({ answer: 'released', released: true });
    expect(await bob(acquire(resource, 'bob'))).toMatchObject({ answer: 'acquired', lease: { owner_id: 'bob' } });
  });

  it('a streamed and a unary Acquire of one request id are one acquisition: the second is its replay (R1)', async () => {
    const alice = leaseStream('alice');
    const unary = coordinatorApi(coordinatorClient(started.coordinator.address), creds.tokens.alice);
    const [first, second] = [fresh('replay'), fresh('replay')];

    const streamed = (await alice(acquire(first, 'alice', 'req-first'))) as { lease: { token: string } };
    const replayed = ok(await unary.acquire(acquire(first, 'alice', 'req-first').acquire));
    expect(replayed).toMatchObject({ replayed: true, lease: { token: streamed.lease.token } });

    const granted = ok(await unary.acquire(acquire(second, 'alice', 'req-second').acquire));
    expect(await alice(acquire(second, 'alice', 'req-second'))).toMatchObject({
      answer: 'acquired',
      replayed: true,
      lease: { token: granted.lease!.token },
    });
  });
});

describe('LeaseStream: who may open one (A4)', () => {
  it("refuses an admin's stream PERMISSION_DENIED before reading its Acquire: nothing is granted", async () => {
    const ops = leaseStream('ops');
    const resource = fresh('admin');
    const failed = (await ops(acquire(resource, 'ops')).catch((error: unknown) => error)) as StreamFailure;
    expect(failed.code).toBe(CODE.PERMISSION_DENIED);
    const described = ok(
      await coordinatorApi(coordinatorClient(started.coordinator.address), creds.tokens.ops).describe(resource),
    );
    expect(described).toMatchObject({ lease: null, last_token: '0' });
  });
});

describe('LeaseStream: a credentials reload (A7)', () => {
  it("ends a stream whose worker's token was removed at its next message, which is not handled; another goes on", async () => {
    const [alice, bob] = [leaseStream('alice'), leaseStream('bob')];
    // Both streams open and authenticated under the full file.
    await alice(acquire(fresh('before'), 'alice'));
    await bob(acquire(fresh('before'), 'bob'));
    const full = readFileSync(creds.file, 'utf8');
    const withoutBob = (JSON.parse(full) as { identity: string }[]).filter((entry) => entry.identity !== 'bob');
    writeFileSync(creds.file, JSON.stringify(withoutBob));
    try {
      expect(started.coordinator.reloadCredentials()).toMatchObject({ kind: 'reloaded' });
      const resource = fresh('after');
      const failed = (await bob(acquire(resource, 'bob')).catch((error: unknown) => error)) as StreamFailure;
      expect(failed.code).toBe(CODE.UNAUTHENTICATED);
      expect(await alice(acquire(fresh('after'), 'alice'))).toMatchObject({ answer: 'acquired' });
      const described = ok(
        await coordinatorApi(coordinatorClient(started.coordinator.address), creds.tokens.alice).describe(resource),
      );
      expect(described).toMatchObject({ lease: null, last_token: '0' });
    } finally {
      writeFileSync(creds.file, full);
      started.coordinator.reloadCredentials();
    }
  });
});
