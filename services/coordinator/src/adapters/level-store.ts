// The LevelDB LeaseStore: one sublevel per kind of key. Reservations, grants
// and TTL changes are synced before they resolve (L3, L6, L4/L7); release and
// fence updates and request collection are not (see LeaseStore for why that is safe).
//
// Tokens are reserved in blocks (issue 11: an Acquire costs one synced write
// here, its grant record, not two). Reserving token t when the stored
// counter is below t stores t + RESERVATION_BLOCK − 1, synced; reserving any
// token up to that ceiling then finds it already reserved and writes
// nothing (store-records.ts, shared with the etcd store). This keeps L3
// step 1 word for word — the token is reserved durably before the sink
// sees it — because the stored counter is only ever written synced and
// LevelDB makes a synced write readable only once its log is synced: a
// ceiling that can be read is durable. After a restart (or
// an eviction, which reads the resource back) the core resumes above the
// ceiling, so tokens still only grow (L6); the rest of a block is burned, a
// gap like that of a failed grant.
//
// Synced writes are group-committed: those that arrive while a synced batch
// is being written wait and go together in the next, one fsync for all, and
// each resolves once its batch is durable. Batches are written one at a
// time in arrival order. The core awaits every write of a resource before
// the next one of it (under the resource's lock), so a queued write never
// races an unsynced one of the same key.
//
// T3, fail-stop: the first write or read that fails (disk full, I/O error)
// fails the store for good. LevelDB goes on appending to its log after a
// failed append, at the wrong offset and without the bytes it dropped, so
// every record written after it would be lost on recovery — grants already
// acknowledged by then included. So nothing more is written: every pending
// and later call rejects with StoreFailedError, and the process stops.
import type { Level } from 'level';
import { StoreFailedError } from '@fencer/common';
import { openLevelDb, type RepairOptions } from '@fencer/server-kit';
import type { LeaseStore, StoredResource, StoredState } from '../core/store.js';
import type { Grant, RequestRecord } from '../core/model.js';
import {
  decodeGrant,
  decodeRequest,
  decodeSinkNames,
  encodeGrant,
  encodeRequest,
  reservationCeiling,
  SINK_NAMES_KEY,
} from './store-records.js';

export { RESERVATION_BLOCK } from './store-records.js';

const sublevel = (db: Level<string, string>, name: string) =>
  db.sublevel<string, string>(name, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
type Sub = ReturnType<typeof sublevel>;
// The counters keyed by their UTF-8 bytes, for getSync: classic-level 3.0.0's
// getSync misses a long non-ASCII utf8 key that was read before it was stored
// (the sink's store contract pins the case).
const bufferKeyed = (db: Level<string, string>, name: string) =>
  db.sublevel<Buffer, string>(name, { keyEncoding: 'buffer', valueEncoding: 'utf8' });

/** On-disk layout version, stamped and checked at open (openLevelDb). */
export const LEVEL_STORE_FORMAT = '1';

const SYNCED = { sync: true } as const;
const UNSYNCED = { sync: false } as const;

type BatchOp = { type: 'put'; sublevel: Sub; key: string; value: string } | { type: 'del'; sublevel: Sub; key: string };

interface QueuedWrite {
  readonly ops: readonly BatchOp[];
  resolve(): void;
  reject(error: unknown): void;
}

/** A LeaseStore in a LevelDB directory (created when missing). One process per directory. */
export class LevelStore implements LeaseStore {
  readonly #counters: Sub;
  readonly #grants: Sub;
  readonly #requests: Sub;
  /** Facts of the deployment: `sinks`, the sink names (P2). */
  readonly #meta: Sub;
  readonly #counterReads: ReturnType<typeof bufferKeyed>;
  /** Synced writes waiting for the batch in flight to be durable. */
  #queued: QueuedWrite[] = [];
  #writing = false;
  #failure: StoreFailedError | undefined;
  #closed = false;
  #reportFailure!: (failure: StoreFailedError) => void;
  readonly #failed = new Promise<StoreFailedError>((resolve) => (this.#reportFailure = resolve));

  /**
   * Wraps an open Level database with utf8 keys and values; `open` is the
   * way in, tests use this to watch its writes. `ready` must settle before use.
   */
  constructor(private readonly db: Level<string, string>) {
    this.#counters = sublevel(db, 'counter');
    this.#counterReads = bufferKeyed(db, 'counter');
    this.#grants = sublevel(db, 'grant');
    this.#requests = sublevel(db, 'request');
    this.#meta = sublevel(db, 'meta');
  }

  /**
   * Opens (creating) the store in `dir`. Throws StartupError with a one-line
   * reason (see openLevelDb; a damaged directory only opens with `repair`).
   */
  static async open(dir: string, options: RepairOptions = {}): Promise<LevelStore> {
    const store = new LevelStore(
      await openLevelDb<string>(dir, {
        service: 'coordinator',
        format: LEVEL_STORE_FORMAT,
        valueEncoding: 'utf8',
        ...options,
      }),
    );
    await store.ready();
    return store;
  }

  /** Opens the sublevels: synchronous reads need them open. */
  async ready(): Promise<void> {
    await this.#counterReads.open();
  }

  async load(): Promise<StoredState> {
    const counters = new Map<string, bigint>();
    for await (const [resource, token] of this.#counters.iterator()) counters.set(resource, BigInt(token));
    const grants: Grant[] = [];
    for await (const [, value] of this.#grants.iterator()) grants.push(decodeGrant(value));
    const requests: RequestRecord[] = [];
    for await (const [, value] of this.#requests.iterator()) requests.push(decodeRequest(value));
    return { counters, grants, requests };
  }

  async loadResource(resource: string): Promise<StoredResource | undefined> {
    // Two reads, not one snapshot: the core calls this under the resource's
    // lock, so no write of this resource can land between them.
    const [counter, grant] = await this.#guard(() =>
      Promise.all([this.#counters.get(resource), this.#grants.get(resource)]),
    );
    if (counter === undefined && grant === undefined) return undefined;
    return {
      counter: counter === undefined ? 0n : BigInt(counter),
      grant: grant === undefined ? null : decodeGrant(grant),
    };
  }

  async reserveToken(resource: string, token: bigint): Promise<void> {
    const stored = await this.#guard(async () => this.#counterReads.getSync(Buffer.from(resource, 'utf8')));
    if (stored !== undefined && BigInt(stored) >= token) return; // durably reserved already
    await this.#synced([
      { type: 'put', sublevel: this.#counters, key: resource, value: reservationCeiling(token).toString() },
    ]);
  }

  recordGrant(grant: Grant, request: RequestRecord): Promise<void> {
    return this.#synced([
      this.#grantPut(grant),
      { type: 'put', sublevel: this.#requests, key: request.requestId, value: encodeRequest(request) },
    ]);
  }

  changeTtl(grant: Grant): Promise<void> {
    return this.#synced([this.#grantPut(grant)]);
  }

  endGrant(grant: Grant): Promise<void> {
    return this.#guard(() => this.db.batch([this.#grantPut(grant)], UNSYNCED));
  }

  async claimSinkNames(names: readonly string[]): Promise<readonly string[]> {
    // One process per directory: nothing else writes between the read and the put.
    const recorded = await this.#guard(() => this.#meta.get(SINK_NAMES_KEY));
    if (recorded !== undefined) return decodeSinkNames(recorded);
    const sorted = [...names].sort();
    await this.#synced([{ type: 'put', sublevel: this.#meta, key: SINK_NAMES_KEY, value: JSON.stringify(sorted) }]);
    return sorted;
  }

  deleteRequests(requestIds: readonly string[]): Promise<void> {
    return this.#guard(() =>
      this.db.batch(
        requestIds.map((key) => ({ type: 'del' as const, sublevel: this.#requests, key })),
        UNSYNCED,
      ),
    );
  }

  whenFailed(): Promise<StoreFailedError> {
    return this.#failed;
  }

  close(): Promise<void> {
    this.#closed = true;
    return this.db.close();
  }

  /** Resolves once `ops` are durable, written atomically with whatever else was queued meanwhile. */
  #synced(ops: readonly BatchOp[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queued.push({ ops, resolve, reject });
      if (!this.#writing) void this.#drain();
    });
  }

  /**
   * Runs one I/O step unless the store has failed or closed; its error fails
   * the store for good (T3, see the top of this file).
   */
  async #guard<T>(io: () => Promise<T>): Promise<T> {
    if (this.#failure) throw this.#failure;
    if (this.#closed) throw new StoreFailedError('coordinator storage is closed');
    try {
      return await io();
    } catch (error) {
      if (this.#closed) throw new StoreFailedError('coordinator storage is closed', { cause: error });
      this.#failure ??= this.#fail(error);
      throw this.#failure;
    }
  }

  #fail(cause: unknown): StoreFailedError {
    const failure = new StoreFailedError(`coordinator storage failed: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.#reportFailure(failure);
    return failure;
  }

  async #drain(): Promise<void> {
    this.#writing = true;
    while (this.#queued.length > 0) {
      const batch = this.#queued;
      this.#queued = [];
      try {
        await this.#guard(() =>
          this.db.batch(
            batch.flatMap((write) => write.ops),
            SYNCED,
          ),
        );
        for (const write of batch) write.resolve();
      } catch (error) {
        for (const write of batch) write.reject(error);
      }
    }
    this.#writing = false;
  }

  #grantPut(grant: Grant): BatchOp {
    return { type: 'put', sublevel: this.#grants, key: grant.resource, value: encodeGrant(grant) };
  }
}
