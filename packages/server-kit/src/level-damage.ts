// T2: finds, before LevelDB opens a directory, the damage that LevelDB's
// open would silently "repair". Once LevelDB has opened such a directory the
// evidence is gone: without CURRENT it starts an empty database and deletes
// the old tables; it replays a damaged write-ahead log minus the damaged
// records, writes the rest into a table, deletes the log, and leaves one line
// in its LOG file, which the next open rotates away. So the files are read
// here, by the rules of LevelDB's own log reader (db/log_reader.cc), first.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One damaged spot in a data directory; `what` is a phrase for a one-line message. */
export interface Damage {
  /** `no-current`: LevelDB would start an empty database; `wal`: it would drop records of `file`. */
  readonly kind: 'no-current' | 'wal';
  /** File name inside the directory. */
  readonly file: string;
  readonly what: string;
}

/** LevelDB's files, as its ParseFileName names them (LOCK and LOG carry no data). */
const CURRENT = 'CURRENT';
const DATA_FILE = /^(MANIFEST-\d+|\d+\.(log|ldb|sst))$/;
const WAL_FILE = /^\d+\.log$/;

/**
 * The damage in `dir` that LevelDB would open as if intact: a missing
 * CURRENT beside the database's files, and write-ahead log records that
 * recovery would drop. A missing or unreadable directory has none (the open
 * reports it), nor has a log deleted between listing and reading: only a
 * process using the directory deletes one, and the open reports that (T3).
 * Reads files only; never writes.
 */
export function findDamage(dir: string): Damage[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  const dataFiles = names.filter((name) => DATA_FILE.test(name));
  const damage: Damage[] = [];
  if (dataFiles.length > 0 && !names.includes(CURRENT)) {
    damage.push({
      kind: 'no-current',
      file: CURRENT,
      what: `CURRENT is missing beside ${dataFiles.length} database files (${dataFiles.slice(0, 3).join(', ')}${dataFiles.length > 3 ? ', ...' : ''}), so LevelDB would start an empty database over them`,
    });
  }
  for (const name of names.filter((n) => WAL_FILE.test(n))) {
    const log = readIfPresent(join(dir, name));
    const drops = log === undefined ? [] : walDrops(log);
    if (drops.length === 0) continue;
    const bytes = drops.reduce((sum, drop) => sum + drop.bytes, 0);
    damage.push({
      kind: 'wal',
      file: name,
      what: `write-ahead log ${name} is damaged at byte ${drops[0]!.offset} (${drops[0]!.reason}${drops.length > 1 ? `, and ${drops.length - 1} more places` : ''}), so LevelDB would drop ${bytes} bytes of records`,
    });
  }
  return damage;
}

/** The file's bytes, or undefined if it no longer exists; other errors throw. */
function readIfPresent(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Where replaying a log would lose records: at `offset`, `bytes` of them, and why. */
export interface WalDrop {
  readonly offset: number;
  readonly bytes: number;
  readonly reason: string;
}

// log_format.h: 32 KiB blocks of records, each behind a 7-byte header
// (masked crc32c of type and data, length, type). A record that does not fit
// its block is split into FIRST, MIDDLE... LAST fragments.
const BLOCK_BYTES = 32_768;
const HEADER_BYTES = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;
/** A WriteBatch is at least its 8-byte sequence number and 4-byte count (RecoverLogFile). */
const MIN_BATCH_BYTES = 12;

type Physical =
  | { readonly kind: 'record'; readonly type: number; readonly offset: number; readonly length: number }
  | { readonly kind: 'bad' }
  | { readonly kind: 'eof' };

/**
 * What LevelDB's log reader, as recovery runs it (checksums on, from offset
 * 0), would drop from the write-ahead log `log`: every drop it reports (the
 * "dropping N bytes" lines in LOG), and also the intact records it skips in
 * silence when a header is zeroed or its length runs past the end of the
 * file. Those two are also what a crash in the middle of an append leaves,
 * so they count only if an intact record follows in the same block: a
 * torn last write was never acknowledged, but a record after it was.
 */
export function walDrops(log: Buffer): WalDrop[] {
  const drops: WalDrop[] = [];
  let blockStart = 0;
  let blockEnd = 0;
  let cursor = 0; // next unread byte of the current block
  let eof = false;
  const drop = (offset: number, bytes: number, reason: string) => drops.push({ offset, bytes, reason });

  // ReadPhysicalRecord.
  const readPhysical = (): Physical => {
    for (;;) {
      if (blockEnd - cursor < HEADER_BYTES) {
        if (eof) return { kind: 'eof' }; // a header cut short by a crash
        blockStart = blockEnd;
        blockEnd = Math.min(blockStart + BLOCK_BYTES, log.length);
        cursor = blockStart; // the trailer of the previous block is padding
        if (blockEnd - blockStart < BLOCK_BYTES) eof = true;
        continue;
      }
      const at = cursor;
      const length = log.readUInt16LE(at + 4);
      const type = log[at + 6]!;
      if (at + HEADER_BYTES + length > blockEnd) {
        cursor = blockEnd;
        if (!eof) {
          drop(at, blockEnd - at, 'bad record length');
          return { kind: 'bad' };
        }
        if (intactRecordWithin(log, at + 1, blockEnd))
          drop(at, blockEnd - at, 'record length past the end of the file');
        return { kind: 'eof' };
      }
      if (type === 0 && length === 0) {
        cursor = blockEnd;
        if (intactRecordWithin(log, at + 1, blockEnd)) drop(at, blockEnd - at, 'zeroed record header');
        return { kind: 'bad' };
      }
      if (!checksumHolds(log, at, length)) {
        // LevelDB drops the rest of the block: the length may be wrong too.
        cursor = blockEnd;
        drop(at, blockEnd - at, 'checksum mismatch');
        return { kind: 'bad' };
      }
      cursor = at + HEADER_BYTES + length;
      return { kind: 'record', type, offset: at, length };
    }
  };

  // ReadRecord, then RecoverLogFile's size check.
  let fragmented: { offset: number; bytes: number } | undefined;
  for (;;) {
    const physical = readPhysical();
    if (physical.kind === 'eof') return drops; // a record missing its end: a torn last write
    if (physical.kind === 'bad') {
      if (fragmented) drop(fragmented.offset, fragmented.bytes, 'error in middle of record');
      fragmented = undefined;
      continue;
    }
    const { type, offset, length } = physical;
    if (type === FULL || type === FIRST) {
      // An empty FIRST fragment at a block's end is an old writer's quirk, not a loss.
      if (fragmented && fragmented.bytes > 0) drop(fragmented.offset, fragmented.bytes, 'partial record without end');
      fragmented = undefined;
      if (type === FIRST) fragmented = { offset, bytes: length };
      else if (length < MIN_BATCH_BYTES) drop(offset, length, 'log record too small');
    } else if (type === MIDDLE || type === LAST) {
      if (!fragmented) drop(offset, length, 'missing start of fragmented record');
      else if (type === MIDDLE) fragmented.bytes += length;
      else {
        if (fragmented.bytes + length < MIN_BATCH_BYTES)
          drop(fragmented.offset, fragmented.bytes, 'log record too small');
        fragmented = undefined;
      }
    } else {
      drop(offset, length + (fragmented?.bytes ?? 0), `unknown record type ${type}`);
      fragmented = undefined;
    }
  }
}

/** Does a record with a valid header and checksum start anywhere in [from, end)? */
function intactRecordWithin(log: Buffer, from: number, end: number): boolean {
  for (let at = from; at + HEADER_BYTES <= end; at++) {
    const type = log[at + 6]!;
    const length = log.readUInt16LE(at + 4);
    if (type >= FULL && type <= LAST && at + HEADER_BYTES + length <= end && checksumHolds(log, at, length))
      return true;
  }
  return false;
}

/** The header at `at` carries crc32c(type, data), masked as LevelDB masks it (util/crc32c.h). */
function checksumHolds(log: Buffer, at: number, length: number): boolean {
  const masked = log.readUInt32LE(at);
  const rotated = (masked - 0xa282ead8) >>> 0;
  const expected = ((rotated >>> 17) | (rotated << 15)) >>> 0;
  return crc32c(log.subarray(at + 6, at + HEADER_BYTES + length)) === expected;
}

/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table-driven. */
const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC32C_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
