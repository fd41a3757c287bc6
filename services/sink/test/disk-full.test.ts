// T3 on a real full disk: the sink's data dir on a 2 MiB tmpfs, filled while
// writers keep Writes in flight. The sink stops at the first failed write
// (exit 1, the cause logged once), and the Writes in flight are answered
// UNAVAILABLE STORAGE_UNAVAILABLE before it goes, where they used to see
// only "Connection reset by peer". Once the filler is deleted the dir opens
// without --repair, with every acknowledged result (S5) and fence intact.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteFailure, type RemoteFailure } from '@fencer/proto';
import type { ServiceError } from '@grpc/grpc-js';
import {
  CODE,
  eventually,
  logEntries,
  mountTmpfs,
  sinkCalls,
  startFencer,
  stopFencer,
  type FencerProcess,
  type Tmpfs,
} from '@fencer/testkit';

let disk: Tmpfs;
const children: FencerProcess[] = [];

beforeAll(() => {
  disk = mountTmpfs(2);
});

afterAll(async () => {
  await Promise.all(children.map((child) => stopFencer(child, 1_000)));
  disk.unmount();
});

async function startSink(dataDir: string): Promise<FencerProcess> {
  const child = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', dataDir]);
  children.push(child);
  return child;
}

const WRITERS = 8;
/** What grpc-js says of a call sent once the process stopped listening. */
const NOT_LISTENING = /ECONNREFUSED|No connection established/;
const PAYLOAD_BYTES = 8 * 1024;

describe('T3: a sink whose disk fills', () => {
  it('answers the Writes in flight STORAGE_UNAVAILABLE, exits 1, and keeps every acknowledged result', async () => {
    const dataDir = join(disk.path, 'sink');
    const sink = await startSink(dataDir);
    const calls = sinkCalls(sink.address);
    const resources = Array.from({ length: WRITERS }, (_, w) => `r${w}`);
    for (const resource of resources)
      await calls.advance({ resource, token: '1', grant_id: `g-${resource}`, owner_id: '' });

    const acknowledged: { resource: string; resultId: string; payload: Buffer }[] = [];
    const failures: RemoteFailure[] = [];
    // Each writer keeps one Write in flight until its first refusal.
    const writer = async (resource: string) => {
      for (let i = 0; ; i++) {
        const resultId = `step-${i}`;
        const payload = Buffer.alloc(PAYLOAD_BYTES, `${resource}/${i}/`);
        try {
          await calls.write({ resource, token: '1', result_id: resultId, payload });
          acknowledged.push({ resource, resultId, payload });
        } catch (error) {
          failures.push(remoteFailure(error as ServiceError));
          return;
        }
      }
    };
    const writers = resources.map(writer);
    await eventually(() => (acknowledged.length >= 40 ? true : undefined), { what: '40 acknowledged writes' });
    expect(disk.fill()).toBeGreaterThan(0);
    await eventually(() => (failures.length > 0 ? true : undefined), { what: 'a refused write' });
    disk.free();
    const { code } = await sink.exited;
    await Promise.all(writers);
    calls.close();

    expect(code).toBe(1);
    const fatal = logEntries(sink.stderr()).filter((entry) => entry.level === 60);
    expect(fatal).toHaveLength(1);
    expect(String(fatal[0]!.msg)).toMatch(/sink storage failed: .*No space left/i);
    // A Write in flight when the disk filled was told why; one sent just
    // after found no sink listening. None was cut off by a reset.
    expect(failures).toHaveLength(WRITERS);
    for (const failure of failures) {
      expect(failure.code, failure.message).toBe(CODE.UNAVAILABLE);
      if (failure.reason !== 'STORAGE_UNAVAILABLE') expect(failure.message).toMatch(NOT_LISTENING);
    }
    expect(failures.filter((f) => f.reason === 'STORAGE_UNAVAILABLE').length).toBeGreaterThan(0);

    // The dir opens without --repair; every acknowledged result and every fence is there (S5).
    const restarted = await startSink(dataDir);
    const again = sinkCalls(restarted.address);
    try {
      for (const resource of resources) expect(await again.getFence(resource)).toEqual({ fence: '1' });
      for (const { resource, resultId, payload } of acknowledged) {
        const read = await again.read(resource, resultId);
        expect(read.token).toBe('1');
        expect(Buffer.compare(read.payload, payload)).toBe(0);
      }
    } finally {
      again.close();
      await stopFencer(restarted);
    }
  });
});
