// Real damage to real data directories (T2): what a disk or an operator can
// do to a stopped service's LevelDB files, and a way to see that a refusal
// left every database file as it was.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// LevelDB's diagnostics log: every open rotates it, even the one that only
// tries the LOCK to tell a directory in use from a damaged one (T3).
const INFO_LOG = new Set(['LOG', 'LOG.old']);

/**
 * Every file in `dir` but LevelDB's LOG and LOG.old, with its size and
 * modification time: equal snapshots mean no database file was touched.
 */
export function dataDirSnapshot(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => !INFO_LOG.has(name))
    .sort()
    .map((name) => {
      const stat = statSync(join(dir, name));
      return `${name} ${stat.size} ${stat.mtimeMs}`;
    });
}

/**
 * Flips `bytes` bytes (default 4 KB) in the middle of the write-ahead log
 * (`*.log`) in `dir`, as a failing disk would. Throws unless there is
 * exactly one log, or it is too short to hold the damage with records on
 * both sides. Returns the log's file name.
 */
export function damageWriteAheadLog(dir: string, bytes = 4096): string {
  const logs = readdirSync(dir).filter((name) => /^\d+\.log$/.test(name));
  if (logs.length !== 1) throw new Error(`expected one write-ahead log in ${dir}, found ${logs.join(', ') || 'none'}`);
  const path = join(dir, logs[0]!);
  const log = readFileSync(path);
  if (log.length < 4 * bytes)
    throw new Error(`${path} holds ${log.length} bytes, too few to damage ${bytes} in the middle`);
  const from = Math.floor((log.length - bytes) / 2);
  for (let i = from; i < from + bytes; i++) log[i]! ^= 0xff;
  writeFileSync(path, log);
  return logs[0]!;
}
