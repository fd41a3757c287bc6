// F6 on disk: each group-commit batch is ONE LevelDB atomic batch written
// with sync: true, so everything a Write stores lands together (F2) and is
// fsynced before anyone is told it happened.
import type { Level } from 'level';
import { openLevelDb, type RepairOptions } from '@fencer/server-kit';
import type { FenceRecord, StoredResult } from '../core/fence-policy.js';
import { GroupCommitStore, type DurableBackend } from '../core/group-commit.js';
import { resultKey, type ResultSummary, type StoreOp } from '../core/store.js';
import { KeyFilter } from './key-filter.js';

/** On-disk layout version, checked at open so a future layout is never misread. */
const FORMAT = '1';

/**
 * Fences kept in memory; past it the one stored or loaded longest ago goes
 * (a few MiB even with 512-byte resource names).
 */
const FENCE_CACHE_ENTRIES = 16_384;

/**
 * The result-key filter's size, fixed at open (RSS does not grow with the
 * results stored): 8 MiB keep false "maybe"s near 1 % up to ~6.7 million
 * results; past that more Writes of a new id read once, as before.
 */
const RESULT_FILTER_BYTES = 8 * 1024 * 1024;

type Db = Level<string, Buffer>;
/** classic-level's implementation of a batch: encoded keys and values, no hooks or events. */
interface NativeBatch {
  _batch(ops: readonly { type: 'put'; key: Buffer; value: Buffer }[], options: { sync: boolean }): Promise<void>;
}
const SYNCED = { sync: true } as const;
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

/** A sublevel's key as the root stores it: the sublevel's prefix, then the key, UTF-8. */
function prefixed(prefix: string, key: string): Buffer {
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(prefix) + Buffer.byteLength(key));
  bytes.write(key, bytes.write(prefix));
  return bytes;
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

/**
 * LevelDB underneath a GroupCommitStore. Open it with `openLevelStore`.
 *
 * The sink is its database's only writer, so what a Write must know can be
 * known without reading: fences are cached (bounded), and a filter of every
 * stored result key says when a result id is certainly new. Both are filled
 * from what this backend writes; the filter also from a scan of the keys
 * already stored, made in the background after open, and until it ends every
 * result lookup reads.
 */
export class LevelBackend implements DurableBackend {
  readonly #fences = new Map<string, FenceRecord | null>();
  readonly #resultKeys = new KeyFilter(RESULT_FILTER_BYTES);
  #resultKeysComplete = false;
  #diskReads = 0;

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
    const backend = new LevelBackend(db, ...sublevels);
    backend.#scanResultKeys();
    return backend;
  }

  /** LevelDB lookups made so far: what the caches and the filter did not answer. */
  get diskReads(): number {
    return this.#diskReads;
  }

  /** Whether the filter holds every stored result key (the background scan has ended). */
  get resultFilterComplete(): boolean {
    return this.#resultKeysComplete;
  }

  // Reads are synchronous (getSync): a hop to libuv's thread pool and back
  // costs ~40x the lookup itself, which LevelDB answers from its memtable and
  // caches. A read never waits on a lock; a lookup that misses the OS page
  // cache blocks the event loop for one disk read, which the pool would only
  // have hidden, not saved.
  async readFence(resource: string): Promise<FenceRecord | undefined> {
    let record = this.#fences.get(resource);
    if (record === undefined) {
      this.#diskReads++;
      const value = this.fenceReads.getSync(Buffer.from(resource, 'utf8'));
      record = value === undefined ? null : decodeFence(value);
      this.#cacheFence(resource, record);
    }
    return record ?? undefined;
  }

  async readResult(resource: string, resultId: string): Promise<StoredResult | undefined> {
    const key = resultKey(resource, resultId);
    if (this.#resultKeysComplete && !this.#resultKeys.mayContain(key)) return undefined;
    this.#diskReads++;
    const value = this.resultReads.getSync(Buffer.from(key, 'utf8'));
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
    // Into the filter before the disk: a key the background scan's snapshot
    // misses is one written after it began, so it is here already.
    for (const op of ops) if (op.kind === 'result') this.#resultKeys.add(resultKey(op.resource, op.resultId));
    // Straight to LevelDB's own batch, keys already prefixed as the
    // sublevels store them: the same bytes on disk, without abstract-level's
    // per-op copying, validation and encoding (every key and value here is
    // a Buffer it would pass through unchanged), which cost the sink more
    // CPU per streamed Write than LevelDB's native batch itself. `_batch`
    // is abstract-level's implementation API; it skips the public method's
    // open check, and classic-level 3.0.0 then crashes the process on a
    // closed database, so that check is made here.
    if (this.db.status !== 'open') throw new Error(`the sink's LevelDB is ${this.db.status}`);
    await (this.db as unknown as NativeBatch)._batch(
      ops.map((op) =>
        op.kind === 'fence'
          ? { type: 'put', key: prefixed(this.fences.prefix, op.resource), value: encodeFence(op.record) }
          : {
              type: 'put',
              key: prefixed(this.results.prefix, resultKey(op.resource, op.resultId)),
              value: encodeResult(op.result),
            },
      ),
      SYNCED,
    );
    // Only once durable: until then the store's overlay answers for them.
    for (const op of ops) if (op.kind === 'fence') this.#cacheFence(op.resource, op.record);
  }

  #cacheFence(resource: string, record: FenceRecord | null): void {
    this.#fences.delete(resource);
    this.#fences.set(resource, record);
    if (this.#fences.size > FENCE_CACHE_ENTRIES) this.#fences.delete(this.#fences.keys().next().value!);
  }

  /** Adds every stored result key to the filter, then lets the filter answer. */
  #scanResultKeys(): void {
    void (async () => {
      try {
        for await (const key of this.results.keys()) this.#resultKeys.add(key);
        this.#resultKeysComplete = true;
      } catch {
        // Closed (or failed) midway: the filter stays incomplete and every lookup reads.
      }
    })();
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
