// T2 with real `fencer coordinator` processes and real LevelDB files: a
// coordinator killed after granting, its data directory damaged, then
// started again. Without --repair it refuses, in one line and exit 1,
// touching no file (a coordinator that started empty would hand a replayed
// request id a second token, S2); with --repair it goes on with what is left
// and logs the loss.
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  coordinatorApi,
  coordinatorClient,
  damageWriteAheadLog,
  dataDirSnapshot,
  eventually,
  logEntries,
  ok,
  runFencer,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';
import { fresh, startSinkProcess } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let sink: FencerProcess;
beforeAll(async () => {
  dir = tempDir('fencer-coordinator-damage-');
  sink = await startSinkProcess(join(dir.path, 'sink'));
});
afterAll(async () => {
  await stopFencer(sink);
  dir.remove();
});

const coordinatorArgs = (dataDir: string) => [
  'coordinator',
  '--insecure',
  '--listen',
  '127.0.0.1:0',
  '--data',
  dataDir,
  '--sink',
  sink.address,
];

const GRANTS = 100;

/** Acquire requests with the same parameters each time, so a retry is a replay (R1). */
function requests() {
  const prefix = fresh('damage');
  return Array.from({ length: GRANTS }, (_, i) => ({
    request_id: `${prefix}-request-${i}`,
    resource: `${prefix}-job-${i}`,
    owner_id: 'alice',
    incarnation: '1',
    ttl_ms: '600000',
  }));
}

/** Sends every request to a coordinator at `address`; returns each answer's token and whether it was a replay. */
async function acquireAll(address: string, all: ReturnType<typeof requests>) {
  const client = coordinatorClient(address);
  try {
    const api = coordinatorApi(client);
    const answers: { token: string; replayed: boolean }[] = [];
    for (const request of all) {
      const { lease, replayed } = ok(await api.acquire(request));
      answers.push({ token: lease!.token, replayed });
    }
    return answers;
  } finally {
    client.close();
  }
}

describe('fencer coordinator on a damaged data directory (T2)', () => {
  it.each([
    {
      damage: 'CURRENT deleted',
      inflict: (dataDir: string) => unlinkSync(join(dataDir, 'CURRENT')),
      refusal:
        /CURRENT is missing beside \d+ database files \(.*\), so LevelDB would start an empty database over them/,
      lostByRepair: false,
    },
    {
      damage: '4 KB of the write-ahead log flipped',
      inflict: (dataDir: string) => damageWriteAheadLog(dataDir),
      refusal:
        /write-ahead log \d+\.log is damaged at byte \d+ \(checksum mismatch.*\), so LevelDB would drop \d+ bytes of records/,
      lostByRepair: true,
    },
  ])('$damage: refused with exit 1, files untouched; --repair goes on with what is left', async (t) => {
    const dataDir = join(dir.path, fresh('coordinator'));
    const all = requests();
    const first = await startFencer(coordinatorArgs(dataDir));
    let granted: { token: string }[];
    try {
      granted = await acquireAll(first.address, all);
    } finally {
      first.kill('SIGKILL');
      expect((await first.exited).signal).toBe('SIGKILL');
    }
    t.inflict(dataDir);
    const before = dataDirSnapshot(dataDir);

    const refused = await runFencer(coordinatorArgs(dataDir));
    expect(refused.code).toBe(1);
    const lines = refused.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^fencer coordinator: data directory ${dataDir} is damaged: `));
    expect(lines[0]).toMatch(t.refusal);
    expect(dataDirSnapshot(dataDir)).toEqual(before);

    const repaired = await startFencer([...coordinatorArgs(dataDir), '--repair']);
    try {
      const warning = await eventually(
        () =>
          logEntries(repaired.stderr()).find((entry) => entry.level === 40 && String(entry.msg).includes('--repair')),
        { what: "the coordinator's repair warning" },
      );
      expect(warning).toMatchObject({ dataDir, damage: [expect.stringMatching(t.refusal)] });
      // R1/S2 for every grant whose records are left: the retry gets the same token.
      const replays = await acquireAll(repaired.address, all);
      const kept = replays.filter((answer, i) => answer.replayed && answer.token === granted[i]!.token).length;
      if (t.lostByRepair) {
        expect(kept).toBeGreaterThan(0);
        expect(kept).toBeLessThan(GRANTS);
      } else {
        expect(kept).toBe(GRANTS);
      }
    } finally {
      await stopFencer(repaired);
    }
  });
});
