// The one way a service opens its LevelDB data directory: created when
// missing, one process at a time (LevelDB's LOCK), and stamped with the
// service and on-disk format it belongs to, so neither service ever reads
// the other's directory (or a future layout) as its own empty state.
import { mkdirSync } from 'node:fs';
import { Level } from 'level';
import { StartupError } from './startup-error.js';

/** Services that keep a data directory. */
export type DataService = 'sink' | 'coordinator';

/** How openLevelDb opens and stamps a directory. */
export interface LevelDbOptions<V extends string | Buffer> {
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
 * the directory cannot be created or opened, is in use by another process,
 * belongs to the other service, holds an unstamped database with data in
 * it, or has another format; it then leaves nothing open behind.
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
  const db = new Level<string, V>(dir, { keyEncoding: 'utf8', valueEncoding: options.valueEncoding });
  try {
    await db.open();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED')
      throw new StartupError(
        `data directory ${dir} is in use by another process (is a second ${options.service} running on it?)`,
      );
    throw new StartupError(`cannot open data directory ${dir}: ${cause?.message ?? (error as Error).message}`);
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
