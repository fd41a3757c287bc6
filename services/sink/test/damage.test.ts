// T2 with real `fencer sink` processes and real LevelDB files: a sink killed
// after acknowledging fences and writes, its data directory damaged, then
// started again. Without --repair it refuses, in one line and exit 1,
// touching no database file; with --repair it serves what is left and logs
// the loss. T3: a second sink on a directory that a running sink holds is
// told it is in use, whatever its files look like.
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  damageWriteAheadLog,
  dataDirSnapshot,
  eventually,
  logEntries,
  readOrMissing,
  runFencer,
  sinkCalls,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';

const started: FencerProcess[] = [];
const dirs: ReturnType<typeof tempDir>[] = [];
afterEach(async () => {
  for (const process of started.splice(0)) await stopFencer(process);
  for (const dir of dirs.splice(0)) dir.remove();
});

const sinkArgs = (dataDir: string) => ['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', dataDir];
async function sink(dataDir: string, extra: string[] = []): Promise<FencerProcess> {
  const process = await startFencer([...sinkArgs(dataDir), ...extra]);
  started.push(process);
  return process;
}

const RESOURCES = Array.from({ length: 60 }, (_, i) => `job-${i}`);
const TOKEN = '7';
const payloadOf = (resource: string) => Buffer.alloc(1000, resource);

/** A running sink on a fresh directory that acknowledged a fence and a result for every resource: all of it is in its log. */
async function sinkAfterWrites(): Promise<{ first: FencerProcess; dataDir: string }> {
  const dir = tempDir('fencer-sink-damage-');
  dirs.push(dir);
  const dataDir = join(dir.path, 'sink');
  const first = await sink(dataDir);
  const client = sinkCalls(first.address);
  try {
    for (const resource of RESOURCES) {
      await client.advance({ resource, token: TOKEN, grant_id: `grant-${resource}` });
      await client.write({ resource, token: TOKEN, result_id: 'result', payload: payloadOf(resource) });
    }
  } finally {
    client.close();
  }
  return { first, dataDir };
}

/** A sink that acknowledged a fence and a result for every resource, then was SIGKILLed. */
async function killedAfterWrites(): Promise<string> {
  const { first, dataDir } = await sinkAfterWrites();
  first.kill('SIGKILL');
  expect((await first.exited).signal).toBe('SIGKILL');
  return dataDir;
}

/** The resources whose acknowledged fence and result a sink at `address` still has. */
async function survivors(address: string): Promise<string[]> {
  const client = sinkCalls(address);
  try {
    const kept: string[] = [];
    for (const resource of RESOURCES) {
      const { fence } = await client.getFence(resource);
      const result = await readOrMissing(client, resource, 'result');
      if (fence === TOKEN && result?.payload.equals(payloadOf(resource))) kept.push(resource);
    }
    return kept;
  } finally {
    client.close();
  }
}

describe('fencer sink on a damaged data directory (T2)', () => {
  it.each([
    {
      damage: 'CURRENT deleted',
      inflict: (dataDir: string) => unlinkSync(join(dataDir, 'CURRENT')),
      refusal:
        /CURRENT is missing beside \d+ database files \(.*\), so LevelDB would start an empty database over them/,
      lostByRepair: 0,
    },
    {
      damage: '4 KB of the write-ahead log flipped',
      inflict: (dataDir: string) => damageWriteAheadLog(dataDir),
      refusal:
        /write-ahead log \d+\.log is damaged at byte \d+ \(checksum mismatch.*\), so LevelDB would drop \d+ bytes of records/,
      lostByRepair: 'some',
    },
  ])('$damage: refused with exit 1, files untouched; --repair serves what is left and logs the loss', async (t) => {
    const dataDir = await killedAfterWrites();
    t.inflict(dataDir);
    const before = dataDirSnapshot(dataDir);

    const refused = await runFencer(sinkArgs(dataDir));
    expect(refused.code).toBe(1);
    const lines = refused.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^fencer sink: data directory ${dataDir} is damaged: `));
    expect(lines[0]).toMatch(t.refusal);
    expect(lines[0]).toMatch(/\. Refusing to open it as if intact \(T2\); --repair goes on with what is left$/);
    expect(dataDirSnapshot(dataDir)).toEqual(before);

    const repaired = await sink(dataDir, ['--repair']);
    const warning = await eventually(
      () => logEntries(repaired.stderr()).find((entry) => entry.level === 40 && String(entry.msg).includes('--repair')),
      { what: "the sink's repair warning" },
    );
    expect(warning).toMatchObject({ dataDir, damage: [expect.stringMatching(t.refusal)] });
    const kept = await survivors(repaired.address);
    if (t.lostByRepair === 0) {
      expect(kept).toEqual(RESOURCES);
    } else {
      expect(warning.leveldb).toEqual(expect.arrayContaining([expect.stringMatching(/dropping \d+ bytes/)]));
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length).toBeLessThan(RESOURCES.length);
    }
  });
});

describe('a second fencer sink on a data directory a running sink holds (T3)', () => {
  // The files of a directory in use are no evidence: the holder may be
  // creating them (a MANIFEST before its CURRENT) or appending to them.
  it.each([
    { looks: 'CURRENT deleted', inflict: (dataDir: string) => unlinkSync(join(dataDir, 'CURRENT')) },
    { looks: 'its write-ahead log damaged', inflict: (dataDir: string) => damageWriteAheadLog(dataDir) },
  ])('is told it is in use, not damaged, even with $looks', async (t) => {
    const { first, dataDir } = await sinkAfterWrites();
    t.inflict(dataDir);
    for (const extra of [[], ['--repair']]) {
      const second = await runFencer([...sinkArgs(dataDir), ...extra]);
      expect(second.code).toBe(1);
      expect(second.stderr.trim()).toBe(
        `fencer sink: data directory ${dataDir} is in use by another process (is a second sink running on it?)`,
      );
    }
    // The refusals left the holder serving.
    const client = sinkCalls(first.address);
    try {
      expect(await client.getFence(RESOURCES[0]!)).toEqual({ fence: TOKEN });
    } finally {
      client.close();
    }
  });
});
