// The one way a service opens its LevelDB data directory: created when
// missing, one process at a time (LevelDB's LOCK: a second process is told
// the directory is in use, never that it is damaged, T3), never opened as
// intact when damaged (T2), and stamped with the service and on-disk format
// it belongs to, so neither service ever reads the other's directory (or a
// future layout) as its own empty state.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { Level } from 'level';
import { StartupError } from '@fencer/cli-kit';
import { findDamage } from './level-damage.js';
import type { Logger } from './log.js';

/** Services that keep a data directory. */
export type DataService = 'sink' | 'coordinator';

/** What openLevelDb does with a damaged directory (T2): refuse it, unless told to repair. */
export interface RepairOptions {
  /** Open a damaged directory anyway, keeping what is left (the `--repair` flag). Default false. */
  readonly repair?: boolean | undefined;
  /** Where a repair reports what was lost (warn). Default: nowhere. */
  readonly log?: Logger | undefined;
}

/** How openLevelDb opens and stamps a directory. */
export interface LevelDbOptions<V extends string | Buffer> extends RepairOptions {
  /** Whose directory this is; checked against the stamp. */
  readonly service: DataService;
  /** The service's on-disk layout version; checked against the stamp. */
  readonly format: string;
  /** Value encoding of the returned database (keys are UTF-8). */
  readonly valueEncoding: V extends Buffer ? 'buffer' : 'utf8';
}

/**
 * Opens (creating when missing) the LevelDB database in `dir` for
 * `options.service`. Rejects with StartupError and a one-line reason when
 * the directory cannot be created or opened, is in use by another process
 * (T3: whatever its files look like), is damaged (T2: a missing CURRENT, a
 * damaged write-ahead log; without `repair`, before LevelDB reads or writes
 * a database file), belongs to the other service,
 * holds an unstamped database with data in it, or has another format; it
 * then leaves nothing open behind. With `repair`, a damaged directory is
 * rebuilt from what is left and the loss is logged as a warning.
 */
export async function openLevelDb<V extends string | Buffer>(
  dir: string,
  options: LevelDbOptions<V>,
): Promise<Level<string, V>> {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new StartupError(`cannot create data directory ${dir}: ${(error as Error).message}`);
  }
  const damage = findDamage(dir);
  // T3: what looks damaged may be a database another process is writing: one
  // being created has its MANIFEST before its CURRENT. Only its LOCK tells.
  if (damage.length > 0) await refuseIfLocked(dir, options.service);
  if (damage.length > 0 && !options.repair) {
    throw new StartupError(
      `data directory ${dir} is damaged: ${damage.map((d) => d.what).join('; ')}. Refusing to open it as if intact (T2); --repair goes on with what is left`,
    );
  }
  const leveldbReport = damage.some((d) => d.kind === 'no-current') ? await rebuildManifest(dir) : [];
  const db = new Level<string, V>(dir, { keyEncoding: 'utf8', valueEncoding: options.valueEncoding });
  try {
    await db.open();
  } catch (error) {
    throw openFailure(error, dir, options.service);
  }
  if (damage.length > 0) {
    // The open replayed the write-ahead logs, dropping the damaged records, and said so in LOG.
    leveldbReport.push(...lossLines(dir));
    options.log?.warn(
      { dataDir: dir, damage: damage.map((d) => d.what), leveldb: leveldbReport },
      'opened a damaged data directory with --repair: the records LevelDB reports dropped are lost (T2)',
    );
  }
  try {
    await checkStamp(db, dir, options);
  } catch (error) {
    // Release the LOCK, so the refusal leaves nothing open behind.
    await db.close();
    throw error;
  }
  return db;
}

/** The StartupError for a failed LevelDB open. */
function openFailure(error: unknown, dir: string, service: DataService): StartupError {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'LEVEL_LOCKED')
    return new StartupError(
      `data directory ${dir} is in use by another process (is a second ${service} running on it?)`,
    );
  return new StartupError(`cannot open data directory ${dir}: ${cause?.message ?? (error as Error).message}`);
}

/**
 * Rejects with the in-use StartupError if another process holds `dir`'s
 * LevelDB LOCK (an fcntl lock, so only trying it tells). The try is an open
 * that can neither create nor recover a database (createIfMissing false,
 * errorIfExists true): LevelDB takes the LOCK, fails before reading a
 * database file, and lets go. Like every LevelDB open, it first rotates the
 * LOG file (LevelDB's own diagnostics) to LOG.old.
 */
async function refuseIfLocked(dir: string, service: DataService): Promise<void> {
  const probe = new ClassicLevel(dir, { createIfMissing: false, errorIfExists: true });
  await probe.open().then(
    () => probe.close(), // unreachable with these options; let go all the same
    (error: unknown) => {
      if ((error as { cause?: { code?: string } }).cause?.code === 'LEVEL_LOCKED')
        throw openFailure(error, dir, service);
      // "does not exist" or "exists": nobody else has it.
    },
  );
}

/**
 * T2 --repair without CURRENT: LevelDB's RepairDB writes a new MANIFEST
 * from the tables and logs that are there (moving what it replaced into
 * lost/), where a plain open would start an empty database and delete them.
 * RepairDB takes no lock: the caller has just found the LOCK free. Returns
 * what LevelDB reported.
 */
async function rebuildManifest(dir: string): Promise<string[]> {
  // CURRENT came back in the meantime: the directory is a database again.
  if (existsSync(join(dir, 'CURRENT'))) return [];
  await ClassicLevel.repair(dir);
  return lossLines(dir);
}

/**
 * The lines of LevelDB's LOG (written afresh by each open and repair) that
 * tell what it dropped or set aside, without their time and thread prefix.
 */
function lossLines(dir: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(dir, 'LOG'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => line.replace(/^\S+ \S+ /, ''))
    .filter((line) => /dropping|corruption|archiving|lost|missing/i.test(line));
}

/**
 * Stamps an empty database with its service and format, or checks the
 * stamp. Data without a stamp is refused rather than written into: read as
 * an empty sink it would drop every fence to 0; read as an empty
 * coordinator it would forget every request id (S2).
 */
async function checkStamp<V>(
  db: Level<string, V>,
  dir: string,
  options: { service: DataService; format: string },
): Promise<void> {
  const meta = db.sublevel<string, string>('meta', { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  const [service, format] = await meta.getMany(['service', 'format']);
  if (service === undefined && format === undefined) {
    const anyKey = await db.keys({ limit: 1 }).all();
    if (anyKey.length > 0)
      throw new StartupError(
        `data directory ${dir} holds a database that is not the ${options.service}'s (no format stamp)`,
      );
    await db.batch(
      [
        { type: 'put', sublevel: meta, key: 'service', value: options.service },
        { type: 'put', sublevel: meta, key: 'format', value: options.format },
      ],
      { sync: true },
    );
    return;
  }
  // Before both services were stamped, only the sink wrote `format`.
  const owner = service ?? 'sink';
  if (owner !== options.service)
    throw new StartupError(`data directory ${dir} holds the ${owner}'s data, not the ${options.service}'s`);
  if (format !== options.format) {
    throw new StartupError(
      `data directory ${dir} holds ${owner} data of format ${format}; this build reads format ${options.format}`,
    );
  }
  if (service === undefined)
    await db.batch([{ type: 'put', sublevel: meta, key: 'service', value: owner }], { sync: true });
}
