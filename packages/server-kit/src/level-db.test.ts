// openLevelDb on real LevelDB directories: each service stamps its own and
// refuses the other's, an unstamped database with data, and another format,
// releasing the directory after every refusal.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { afterAll, describe, expect, it } from 'vitest';
import { openLevelDb, type DataService } from './level-db.js';
import { StartupError } from './startup-error.js';

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
