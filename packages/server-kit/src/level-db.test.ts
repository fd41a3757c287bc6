// openLevelDb on real LevelDB directories: each service stamps its own and
// refuses the other's, an unstamped database with data, another format and
// a damaged directory (T2), releasing the directory after every refusal;
// --repair goes on with what is left and logs the loss.
import { mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Level } from 'level';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { damageWriteAheadLog, dataDirSnapshot } from '@fencer/testkit';
import { StartupError } from '@fencer/cli-kit';
import { openLevelDb, type DataService } from './level-db.js';

const root = mkdtempSync(join(tmpdir(), 'fencer-level-db-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let next = 0;
const freshDir = () => join(root, String(++next));

const open = (dir: string, service: DataService, format = '1') =>
  openLevelDb<string>(dir, { service, format, valueEncoding: 'utf8' });

/** The refusal's message; the directory must be free again afterwards. */
async function refusal(dir: string, service: DataService, format = '1'): Promise<string> {
  const error = await open(dir, service, format).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StartupError);
  const db = new Level(dir);
  await db.open(); // would fail with LEVEL_LOCKED had the refusal kept it
  await db.close();
  return (error as Error).message;
}

/** Writes raw keys with plain LevelDB, as another program would. */
async function seed(dir: string, entries: Record<string, string>): Promise<void> {
  const db = new Level<string, string>(dir);
  await db.batch(Object.entries(entries).map(([key, value]) => ({ type: 'put' as const, key, value })));
  await db.close();
}

describe('openLevelDb', () => {
  it('stamps a new directory, and opens it again for the same service', async () => {
    const dir = freshDir();
    const db = await open(dir, 'coordinator');
    await db.put('k', 'v');
    await db.close();
    const again = await open(dir, 'coordinator');
    expect(await again.get('k')).toBe('v');
    await again.close();
  });

  it.each([
    ['sink', 'coordinator'],
    ['coordinator', 'sink'],
  ] as const)('a %s directory is refused by the %s', async (owner, opener) => {
    const dir = freshDir();
    await (await open(dir, owner)).close();
    expect(await refusal(dir, opener)).toBe(`data directory ${dir} holds the ${owner}'s data, not the ${opener}'s`);
  });

  it('refuses unstamped data and writes nothing into it', async () => {
    const dir = freshDir();
    await seed(dir, { '!grant!job': '{"token":"7"}' });
    expect(await refusal(dir, 'coordinator')).toMatch(/not the coordinator's \(no format stamp\)$/);
    const db = new Level<string, string>(dir);
    expect(await db.keys().all()).toEqual(['!grant!job']);
    await db.close();
  });

  it('refuses another format of its own service', async () => {
    const dir = freshDir();
    await (await open(dir, 'sink', '1')).close();
    expect(await refusal(dir, 'sink', '2')).toMatch(/holds sink data of format 1; this build reads format 2$/);
  });

  it("reads a format-only stamp as the sink's (the sink stamped alone before), and completes it", async () => {
    const dir = freshDir();
    await seed(dir, { '!meta!format': '1', '!fence!job': 'x' });
    expect(await refusal(dir, 'coordinator')).toMatch(/holds the sink's data, not the coordinator's$/);
    await (await open(dir, 'sink')).close();
    const db = new Level<string, string>(dir);
    expect(await db.get('!meta!service')).toBe('sink');
    await db.close();
  });

  it('refuses a directory another process holds, and a path that is a file', async () => {
    const dir = freshDir();
    const first = await open(dir, 'sink');
    await expect(open(dir, 'sink')).rejects.toThrow(/is in use by another process/);
    await first.close();
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    await expect(open(file, 'sink')).rejects.toBeInstanceOf(StartupError);
  });
});

/** A stamped sink directory holding `count` keys, all still in its write-ahead log. */
async function sinkWithKeys(count: number): Promise<string> {
  const dir = freshDir();
  const db = await open(dir, 'sink');
  for (let i = 0; i < count; i++) await db.put(`key-${String(i).padStart(4, '0')}`, 'v'.repeat(900), { sync: true });
  await db.close();
  return dir;
}

/** openLevelDb with --repair, and the warnings it logged. */
async function repairOpen(dir: string): Promise<{ keys: string[]; warnings: Record<string, unknown>[] }> {
  const lines: string[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      lines.push(chunk.toString());
      done();
    },
  });
  const db = await openLevelDb<string>(dir, {
    service: 'sink',
    format: '1',
    valueEncoding: 'utf8',
    repair: true,
    log: pino({ level: 'warn' }, sink),
  });
  const keys = await db.keys().all();
  await db.close();
  return { keys, warnings: lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('openLevelDb on a damaged directory (T2)', () => {
  it('refuses a missing CURRENT without touching a database file; --repair brings every record back', async () => {
    const dir = await sinkWithKeys(300);
    unlinkSync(join(dir, 'CURRENT'));
    const before = dataDirSnapshot(dir);
    await expect(open(dir, 'sink')).rejects.toThrow(
      new RegExp(
        `^data directory ${dir} is damaged: CURRENT is missing beside \\d+ database files .*, so LevelDB would start an empty database over them\\. Refusing to open it as if intact \\(T2\\); --repair goes on with what is left$`,
      ),
    );
    expect(dataDirSnapshot(dir)).toEqual(before);

    const repaired = await repairOpen(dir);
    expect(repaired.keys.filter((k) => k.startsWith('key-'))).toHaveLength(300);
    expect(repaired.warnings).toEqual([
      expect.objectContaining({
        level: 40,
        dataDir: dir,
        damage: [expect.stringMatching(/^CURRENT is missing/)],
        leveldb: expect.arrayContaining([expect.stringMatching(/Repaired leveldb/)]),
      }),
    ]);
    // Repaired for good: the next open needs no --repair.
    await (await open(dir, 'sink')).close();
  });

  it('refuses a damaged write-ahead log without touching it; --repair keeps what is left and logs the drop', async () => {
    const dir = await sinkWithKeys(300);
    damageWriteAheadLog(dir);
    const before = dataDirSnapshot(dir);
    await expect(open(dir, 'sink')).rejects.toThrow(
      new RegExp(
        `^data directory ${dir} is damaged: write-ahead log \\d+\\.log is damaged at byte \\d+ \\(checksum mismatch.*\\), so LevelDB would drop \\d+ bytes of records\\. Refusing`,
      ),
    );
    expect(dataDirSnapshot(dir)).toEqual(before);

    const repaired = await repairOpen(dir);
    const kept = repaired.keys.filter((k) => k.startsWith('key-')).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(300);
    expect(repaired.warnings).toEqual([
      expect.objectContaining({
        damage: [expect.stringMatching(/^write-ahead log/)],
        leveldb: expect.arrayContaining([expect.stringMatching(/dropping \d+ bytes; Corruption: checksum mismatch/)]),
      }),
    ]);
    await (await open(dir, 'sink')).close();
  });

  it('--repair refuses a directory without CURRENT that another process holds', async () => {
    const dir = await sinkWithKeys(10);
    const holder = new Level(dir);
    await holder.open();
    try {
      unlinkSync(join(dir, 'CURRENT'));
      await expect(repairOpen(dir)).rejects.toThrow(/is in use by another process/);
      expect(readdirSync(dir)).not.toContain('lost');
    } finally {
      await holder.close();
    }
  });
});
