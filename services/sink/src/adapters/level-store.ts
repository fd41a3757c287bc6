// F6 on disk: each group-commit batch is ONE LevelDB atomic batch written
// with sync: true, so everything a Write stores lands together (F2) and is
// fsynced before anyone is told it happened.
import type { Level } from 'level';
import { openLevelDb, type RepairOptions } from '@fencer/server-kit';
import type { FenceRecord, StoredResult } from '../core/fence-policy.js';
import { GroupCommitStore, type DurableBackend } from '../core/group-commit.js';
import { resultKey, type ResultSummary, type StoreOp } from '../core/store.js';

/** On-disk layout version, checked at open so a future layout is never misread. */
const FORMAT = '1';

type Db = Level<string, Buffer>;
const binarySublevel = (db: Db, name: string) =>
  db.sublevel<string, Buffer>(name, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
type Sublevel = ReturnType<typeof binarySublevel>;
// The same sublevel keyed by the UTF-8 bytes themselves, for getSync:
// classic-level 3.0.0's getSync with a 'utf8' key misses a long non-ASCII
// key (256 astral characters) that was read once before it was stored.
const readView = (db: Db, name: string) =>
  db.sublevel<Buffer, Buffer>(name, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
type ReadView = ReturnType<typeof readView>;

// Values are binary: 8-byte big-endian uint64, then the rest. Keys are
// UTF-8: a fence's is its resource, a result's is core's resultKey. A fence's
// rest is its grant_id, then, only when it is bound to an owner (A5), a NUL
// and the owner_id: a fence stored before A5 reads as bound to no one, and
// an unbound fence is stored exactly as before (assertStorableFence keeps
// NUL out of grant_id).
function encodeFence(record: FenceRecord): Buffer {
  const rest = record.ownerId === null ? record.grantId : `${record.grantId}\u0000${record.ownerId}`;
  const text = Buffer.from(rest, 'utf8');
  const value = Buffer.allocUnsafe(8 + text.length);
  value.writeBigUInt64BE(record.fence, 0);
  text.copy(value, 8);
  return value;
}

function decodeFence(value: Buffer): FenceRecord {
  const rest = value.subarray(8);
  const end = rest.indexOf(0);
  return {
    fence: value.readBigUInt64BE(0),
    grantId: rest.subarray(0, end === -1 ? rest.length : end).toString('utf8'),
    ownerId: end === -1 ? null : rest.subarray(end + 1).toString('utf8'),
  };
}

function encodeResult(result: StoredResult): Buffer {
  const value = Buffer.allocUnsafe(8 + result.payload.byteLength);
  value.writeBigUInt64BE(result.token, 0);
  value.set(result.payload, 8);
  return value;
}

function decodeResult(value: Buffer): StoredResult {
  return { token: value.readBigUInt64BE(0), payload: value.subarray(8) };
}

/** LevelDB underneath a GroupCommitStore. Open it with `openLevelStore`. */
export class LevelBackend implements DurableBackend {
  private constructor(
    private readonly db: Db,
    private readonly fences: Sublevel,
    private readonly results: Sublevel,
    private readonly fenceReads: ReadView,
    private readonly resultReads: ReadView,
  ) {}

  /** The backend over `db`, once it and its sublevels are open (synchronous reads need that). */
  static async open(db: Db): Promise<LevelBackend> {
    await db.open();
    const sublevels = [
      binarySublevel(db, 'fence'),
      binarySublevel(db, 'result'),
      readView(db, 'fence'),
      readView(db, 'result'),
    ] as const;
    await Promise.all(sublevels.map((sublevel) => sublevel.open()));
    return new LevelBackend(db, ...sublevels);
  }

  // Reads are synchronous (getSync): every Write reads its fence and its
  // result id, and a hop to libuv's thread pool and back costs ~40x the
  // lookup itself, which LevelDB answers from its memtable and caches. The
  // sink is the database's only writer, so a read never waits on a lock; a
  // lookup that misses the OS page cache blocks the event loop for one disk
  // read, which the pool would only have hidden, not saved.
  async readFence(resource: string): Promise<FenceRecord | undefined> {
    const value = this.fenceReads.getSync(Buffer.from(resource, 'utf8'));
    return value === undefined ? undefined : decodeFence(value);
  }

  async readResult(resource: string, resultId: string): Promise<StoredResult | undefined> {
    const value = this.resultReads.getSync(Buffer.from(resultKey(resource, resultId), 'utf8'));
    return value === undefined ? undefined : decodeResult(value);
  }

  async *scanResults(resource: string): AsyncIterable<ResultSummary> {
    // resultKey puts NUL after the resource, so the resource's keys are exactly those in [resource NUL, resource \u0001).
    const prefix = resultKey(resource, '');
    for await (const [key, value] of this.results.iterator({ gte: prefix, lt: `${resource}\u0001` })) {
      yield { resultId: key.slice(prefix.length), token: value.readBigUInt64BE(0), sizeBytes: value.length - 8 };
    }
  }

  async writeBatch(ops: readonly StoreOp[]): Promise<void> {
    await this.db.batch(
      ops.map((op) =>
        op.kind === 'fence'
          ? { type: 'put' as const, sublevel: this.fences, key: op.resource, value: encodeFence(op.record) }
          : {
              type: 'put' as const,
              sublevel: this.results,
              key: resultKey(op.resource, op.resultId),
              value: encodeResult(op.result),
            },
      ),
      { sync: true },
    );
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/**
 * Opens (creating when missing) the sink's LevelDB store in `dir`. Throws
 * StartupError with a one-line reason (see openLevelDb; a damaged directory
 * only opens with `repair`) and then leaves nothing open behind.
 */
export async function openLevelStore(
  dir: string,
  options: RepairOptions & { onBatchDurable?: (info: { ops: number }) => void } = {},
): Promise<{ store: GroupCommitStore; db: Db }> {
  const { repair, log, ...storeOptions } = options;
  const db = await openLevelDb<Buffer>(dir, { service: 'sink', format: FORMAT, valueEncoding: 'buffer', repair, log });
  return { store: new GroupCommitStore(await LevelBackend.open(db), storeOptions), db };
}
