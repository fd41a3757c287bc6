// A7 against a real `fencer sink` process: a WriteStream opened before a
// credentials reload (SIGHUP) goes on only while its own credential still
// names the caller it was opened as. One that the reload removed, gave
// another role or replaced by a new token ends UNAUTHENTICATED at its next
// message, and that message is not stored; another worker's stream, whose
// credential the reload left alone, goes on.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RemoteFailure } from '@fencer/proto';
import {
  CODE,
  eventually,
  logEntries,
  readOrMissing,
  sinkCalls,
  sinkClient,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
  type SinkCalls,
} from '@fencer/testkit';
import { openWriteStream } from './helpers.js';

const COORDINATOR = { token: 'coordinator-token-a7-0123456789', identity: 'coordinator', role: 'coordinator' };
const WORKER_A = { token: 'worker-a-token-a7-0123456789', identity: 'worker-a', role: 'worker' };
const WORKER_B = { token: 'worker-b-token-a7-0123456789', identity: 'worker-b', role: 'worker' };
const ADMIN = { token: 'admin-token-a7-0123456789', identity: 'admin', role: 'admin' };
const ALL = [COORDINATOR, WORKER_A, WORKER_B, ADMIN];

let dir: ReturnType<typeof tempDir>;
let file: string;
let sink: FencerProcess;
let coordinator: SinkCalls;
let admin: SinkCalls;
const clients: { close(): void }[] = [];

/** Writes `entries` as the credentials file, sends SIGHUP and waits until the sink has taken them. */
async function reload(entries: object[]): Promise<void> {
  writeFileSync(file, JSON.stringify(entries));
  const reloaded = () => logEntries(sink.stderr()).filter((entry) => entry.msg === 'credentials reloaded');
  const before = reloaded().length;
  sink.kill('SIGHUP');
  await eventually(() => reloaded()[before], { what: 'the "credentials reloaded" log line' });
}

beforeAll(async () => {
  dir = tempDir('fencer-write-stream-reload-');
  file = join(dir.path, 'credentials.json');
  writeFileSync(file, JSON.stringify(ALL));
  sink = await startFencer([
    'sink',
    '--listen',
    '127.0.0.1:0',
    '--credentials',
    file,
    '--data',
    join(dir.path, 'data'),
  ]);
  coordinator = sinkCalls(sink.address, COORDINATOR.token);
  admin = sinkCalls(sink.address, ADMIN.token);
  clients.push(coordinator, admin);
  for (const owner of [WORKER_A, WORKER_B])
    await coordinator.advance({
      resource: owner.identity,
      token: '1',
      grant_id: `${owner.identity}-1`,
      owner_id: owner.identity,
    });
});

afterAll(async () => {
  for (const client of clients) client.close();
  if (sink) await stopFencer(sink);
  dir?.remove();
});

// Each case starts from the full file, so a stream opened now is authenticated under it.
beforeEach(() => reload(ALL));

/** A WriteStream as `token` on a connection of its own, writing to its owner's resource under token 1. */
function stream(token: string, resource: string) {
  const client = sinkClient(sink.address);
  clients.push(client);
  const s = openWriteStream(client, token);
  const write = (resultId: string) => ({
    write: { resource, token: '1', result_id: resultId, payload: Buffer.from(resultId) },
  });
  return {
    ...s,
    /** The answer to one write, or the status the stream ended with first. */
    next: (resultId: string) => Promise.race([s.ask(write(resultId)), s.ended]),
  };
}

describe('A7: an open WriteStream after a reload', () => {
  it.each([
    ['removed', [COORDINATOR, WORKER_B, ADMIN]],
    ['given another role', [COORDINATOR, { ...WORKER_A, role: 'admin' }, WORKER_B, ADMIN]],
    ['replaced by a new token', [COORDINATOR, { ...WORKER_A, token: 'worker-a-new-token-a7-0123' }, WORKER_B, ADMIN]],
  ])('a worker whose credential was %s: its next message ends the stream, unstored', async (what, entries) => {
    const resultIds = { before: `before-${what}`, after: `after-${what}` };
    const a = stream(WORKER_A.token, WORKER_A.identity);
    const b = stream(WORKER_B.token, WORKER_B.identity);
    expect(await a.next(resultIds.before)).toMatchObject({ outcome: 'APPLIED' });
    expect(await b.next(resultIds.before)).toMatchObject({ outcome: 'APPLIED' });

    await reload(entries);

    const ended = (await a.next(resultIds.after)) as RemoteFailure;
    expect([ended.code, ended.reason]).toEqual([CODE.UNAUTHENTICATED, 'UNAUTHENTICATED']);
    expect(await readOrMissing(admin, WORKER_A.identity, resultIds.after)).toBeUndefined();
    expect((await readOrMissing(admin, WORKER_A.identity, resultIds.before))?.payload.toString()).toBe(
      resultIds.before,
    );

    // The other worker's credential is as it was: its stream goes on.
    expect(await b.next(resultIds.after)).toMatchObject({ outcome: 'APPLIED' });
    expect((await readOrMissing(admin, WORKER_B.identity, resultIds.after))?.payload.toString()).toBe(resultIds.after);
    expect(await b.end()).toBe('OK');
  });
});
