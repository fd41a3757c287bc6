// T2: walDrops and findDamage on real LevelDB files, checked against what
// LevelDB itself then loses: every damage it would drop records for is
// found, and what a crash leaves at the end of a log is not taken for damage.
import { createHash } from 'node:crypto';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDamage, walDrops } from './level-damage.js';

const root = mkdtempSync(join(tmpdir(), 'fencer-level-damage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const KEYS = 120;
const key = (i: number) => `k${String(i).padStart(4, '0')}`;
/** Values of 1 byte to 20 KB, so records share blocks and span them (FIRST, MIDDLE, LAST fragments). */
const value = (i: number) =>
  Buffer.alloc(
    1 + (Number.parseInt(createHash('sha256').update(`size${i}`).digest('hex').slice(0, 6), 16) % 20_000),
    createHash('sha256').update(`value${i}`).digest(),
  );

const base = join(root, 'base');
let logName: string;
let intact: Buffer;
/** Offsets of the record headers in `intact`, found by walking its blocks. */
const headers: number[] = [];

beforeAll(async () => {
  const db = new Level<string, Buffer>(base, { valueEncoding: 'buffer' });
  for (let i = 0; i < KEYS; i++) await db.put(key(i), value(i), { sync: true });
  await db.close(); // LevelDB leaves its memtable in the log: the log holds every record
  logName = readdirSync(base).find((name) => name.endsWith('.log'))!;
  intact = readFileSync(join(base, logName));
  for (let at = 0; at + 7 <= intact.length;) {
    const blockEnd = (Math.floor(at / 32_768) + 1) * 32_768;
    if (blockEnd - at < 7) at = blockEnd;
    else {
      headers.push(at);
      at += 7 + intact.readUInt16LE(at + 4);
    }
  }
});

let trials = 0;
/** Opens a copy of the database whose log is `log` with plain LevelDB, and returns the keys it kept. */
async function keysLevelDbKeeps(log: Buffer): Promise<number> {
  const dir = join(root, `trial-${++trials}`);
  cpSync(base, dir, { recursive: true });
  writeFileSync(join(dir, logName), log);
  const db = new Level(dir);
  const kept = (await db.keys().all()).length;
  await db.close();
  return kept;
}

const lastBlock = () => Math.floor((intact.length - 1) / 32_768) * 32_768;
const middle = () => Math.floor(intact.length / 2);
const headerNear = (offset: number) => headers.find((h) => h >= offset)!;
const flip = (log: Buffer, from: number, bytes: number) => {
  for (let i = from; i < from + bytes; i++) log[i]! ^= 0xff;
  return log;
};

describe('walDrops on a real write-ahead log (T2)', () => {
  it('finds nothing in an intact log of records that share and span blocks', () => {
    expect(intact.length).toBeGreaterThan(4 * 32_768);
    expect(walDrops(intact)).toEqual([]);
  });

  it.each([
    ['4 KB flipped in the middle', (log: Buffer) => flip(log, middle(), 4096)],
    ['4 KB zeroed in the middle', (log: Buffer) => log.fill(0, middle(), middle() + 4096)],
    ['4 KB flipped from a record header', (log: Buffer) => flip(log, headerNear(middle()), 4096)],
    // LevelDB itself drops these two without a word in its LOG.
    [
      '4 KB zeroed from a record header',
      (log: Buffer) => log.fill(0, headerNear(middle()), headerNear(middle()) + 4096),
    ],
    ['a header flipped in the last block', (log: Buffer) => flip(log, headerNear(lastBlock()), 100)],
    [
      'a header zeroed in the last block',
      (log: Buffer) => log.fill(0, headerNear(lastBlock()), headerNear(lastBlock()) + 100),
    ],
    ["the last record's data zeroed", (log: Buffer) => log.fill(0, headers.at(-1)! + 7)],
  ])('%s: found, and LevelDB would lose acknowledged records', async (_, damage) => {
    const log = damage(Buffer.from(intact));
    expect(walDrops(log).length).toBeGreaterThan(0);
    expect(await keysLevelDbKeeps(log)).toBeLessThan(KEYS);
  });

  it.each([
    ['the last record cut short', () => intact.subarray(0, intact.length - 5)],
    ['the last header cut short', () => intact.subarray(0, headers.at(-1)! + 3)],
    ['zeros past the end (a file extended, its data never written)', () => Buffer.concat([intact, Buffer.alloc(5000)])],
  ])('%s: what a crash leaves is no damage, and only the torn write is lost', async (_, tail) => {
    const log = tail();
    expect(walDrops(log)).toEqual([]);
    expect(await keysLevelDbKeeps(log)).toBeGreaterThanOrEqual(KEYS - 1);
  });
});

describe('findDamage', () => {
  it('names a missing CURRENT beside the database files, and a damaged log', () => {
    const dir = join(root, 'find');
    cpSync(base, dir, { recursive: true });
    expect(findDamage(dir)).toEqual([]);
    unlinkSync(join(dir, 'CURRENT'));
    writeFileSync(join(dir, logName), flip(Buffer.from(intact), middle(), 4096));
    expect(findDamage(dir)).toEqual([
      {
        kind: 'no-current',
        file: 'CURRENT',
        what: expect.stringMatching(/^CURRENT is missing beside 2 database files \(.*MANIFEST-\d+.*\)/),
      },
      {
        kind: 'wal',
        file: logName,
        what: expect.stringMatching(/^write-ahead log \d+\.log is damaged at byte \d+ \(checksum mismatch/),
      },
    ]);
  });

  it('takes a log deleted between listing and reading for no damage (a process using the directory, T3)', () => {
    const dir = join(root, 'vanishing');
    cpSync(base, dir, { recursive: true });
    // A link to nowhere is listed like a log and then fails to read with ENOENT, as one deleted in between.
    symlinkSync(join(root, 'deleted.log'), join(dir, '999999.log'));
    expect(findDamage(dir)).toEqual([]);
  });

  it('finds nothing in a new, an empty or a missing directory', () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    expect(findDamage(empty)).toEqual([]);
    expect(findDamage(join(root, 'absent'))).toEqual([]);
  });
});
