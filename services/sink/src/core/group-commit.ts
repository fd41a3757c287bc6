// F6 with throughput: every acknowledged change is fsynced first, and while
// one synced batch is in flight, newly committed ops gather into the next one
// (group commit). F2 relies on the overlay: a committed op is readable at
// once, so a decision taken under a resource lock sees every earlier one even
// before it is durable.
import type { FenceRecord, StoredResult } from './fence-policy.js';
import { StoreFailedError } from '@fencer/common';
import {
  assertStorableFence,
  resultKey,
  type JoinedBatch,
  type ResultSummary,
  type SinkStore,
  type StoreOp,
} from './store.js';

/** Durable storage underneath a GroupCommitStore (LevelDB, or memory in tests). */
export interface DurableBackend {
  /** The fence as last synced; rejects on I/O error (the store then fails). */
  readFence(resource: string): Promise<FenceRecord | undefined>;
  /** The result as last synced; rejects on I/O error (the store then fails). */
  readResult(resource: string, resultId: string): Promise<StoredResult | undefined>;
  /** Every synced result of `resource`, in any order; rejects on I/O error (the store then fails). */
  scanResults(resource: string): AsyncIterable<ResultSummary>;
  /**
   * Writes all ops atomically, later ops winning on a repeated key; resolves
   * only once they are durable (fsynced). Never called while a call is pending.
   */
  writeBatch(ops: readonly StoreOp[]): Promise<void>;
  /** Releases the storage; called once, after the last batch settled. */
  close(): Promise<void>;
}

/** Counters for tests and metrics. */
export interface GroupCommitStats {
  /** Batches handed to the backend (one synced write each). */
  readonly batches: number;
  /** `commit` calls accepted. */
  readonly commits: number;
  /** Ops written durably so far. */
  readonly durableOps: number;
  /** Values committed but not yet durable (the overlay's size). */
  readonly pending: number;
}

interface Batch {
  /** Set when the batch is handed to the backend. */
  number: number;
  readonly ops: StoreOp[];
  readonly keys: string[];
  readonly durable: Promise<JoinedBatch>;
  resolve(joined: JoinedBatch): void;
  reject(error: Error): void;
}

interface Pending {
  readonly value: FenceRecord | StoredResult;
  readonly batch: Batch;
}

// One overlay for both kinds: the first character keeps a fence key apart
// from every result key, whatever the resource holds.
const fenceKey = (resource: string) => `f${resource}`;
const overlayResultKey = (resource: string, resultId: string) => `r${resultKey(resource, resultId)}`;
function opKey(op: StoreOp): string {
  if (op.kind === 'result') return overlayResultKey(op.resource, op.resultId);
  assertStorableFence(op.record);
  return fenceKey(op.resource);
}

/** Highest token first (S4: the latest writes), ties by result_id so the order is stable. */
function newestFirst(results: readonly ResultSummary[]): ResultSummary[] {
  return [...results].sort((a, b) =>
    a.token === b.token ? (a.resultId < b.resultId ? -1 : 1) : a.token > b.token ? -1 : 1,
  );
}

function newBatch(): Batch {
  let resolve!: (joined: JoinedBatch) => void;
  let reject!: (error: Error) => void;
  const durable = new Promise<JoinedBatch>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Callers may never await a batch (e.g. nobody called settled()); its
  // failure is reported through whenFailed, not as an unhandled rejection.
  durable.catch(() => undefined);
  return { number: 0, ops: [], keys: [], durable, resolve, reject };
}

/**
 * A SinkStore over any DurableBackend: pending values live in a small overlay
 * until their batch is synced, at most one batch is in flight, and batches
 * are written in commit order. Memory holds only pending values.
 */
export class GroupCommitStore implements SinkStore {
  readonly #backend: DurableBackend;
  readonly #overlay = new Map<string, Pending>();
  #open: Batch = newBatch();
  #inFlight: Batch | undefined;
  #failure: StoreFailedError | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  #reportFailure!: (error: Error) => void;
  readonly #failed = new Promise<Error>((resolve) => (this.#reportFailure = resolve));
  readonly #onBatch: ((info: { ops: number }) => void) | undefined;
  #stats = { batches: 0, commits: 0, durableOps: 0 };

  constructor(backend: DurableBackend, options: { onBatchDurable?: (info: { ops: number }) => void } = {}) {
    this.#backend = backend;
    this.#onBatch = options.onBatchDurable;
  }

  /** A snapshot of the counters; `pending` is 0 whenever nothing awaits a sync. */
  get stats(): GroupCommitStats {
    return { ...this.#stats, pending: this.#overlay.size };
  }

  async fence(resource: string): Promise<FenceRecord | undefined> {
    this.#check();
    const pending = this.#overlay.get(fenceKey(resource));
    if (pending) return pending.value as FenceRecord;
    return this.#read(() => this.#backend.readFence(resource));
  }

  async result(resource: string, resultId: string): Promise<StoredResult | undefined> {
    this.#check();
    const pending = this.#overlay.get(overlayResultKey(resource, resultId));
    if (pending) return pending.value as StoredResult;
    return this.#read(() => this.#backend.readResult(resource, resultId));
  }

  commit(ops: readonly StoreOp[]): Promise<JoinedBatch | undefined> {
    let keys: string[];
    try {
      this.#check();
      // Every key first: an op that cannot be keyed or stored must not
      // leave the ops before it committed (all of one commit or none, F2).
      keys = ops.map(opKey);
    } catch (error) {
      return Promise.reject(error);
    }
    // Nothing to make durable; an empty batch would never be flushed.
    if (ops.length === 0) return this.settled().then(() => undefined);
    const batch = this.#open;
    ops.forEach((op, i) => {
      batch.ops.push(op);
      batch.keys.push(keys[i]!);
      this.#overlay.set(keys[i]!, { value: op.kind === 'fence' ? op.record : op.result, batch });
    });
    this.#stats.commits++;
    this.#flush();
    // The batch's own promise, no later: outcomes of one resource settle in
    // decision order only if commit() and settled() resolve on the same turn.
    return batch.durable;
  }

  settled(): Promise<JoinedBatch | undefined> {
    if (this.#failure) return Promise.reject(this.#failure);
    // FIFO: the newest batch being durable implies every older one is.
    if (this.#open.ops.length > 0) return this.#open.durable;
    return this.#inFlight?.durable ?? Promise.resolve(undefined);
  }

  async durableFence(resource: string): Promise<FenceRecord | undefined> {
    this.#check();
    const pending = this.#overlay.get(fenceKey(resource));
    if (pending) {
      // The value was the latest when this read began; answer it only once
      // a crash can no longer take it back (F6 for readers).
      await pending.batch.durable;
      return pending.value as FenceRecord;
    }
    return this.#read(() => this.#backend.readFence(resource));
  }

  async durableResult(resource: string, resultId: string): Promise<StoredResult | undefined> {
    this.#check();
    const pending = this.#overlay.get(overlayResultKey(resource, resultId));
    if (pending) {
      await pending.batch.durable;
      return pending.value as StoredResult;
    }
    return this.#read(() => this.#backend.readResult(resource, resultId));
  }

  async durableResults(resource: string, limit: number): Promise<ResultSummary[]> {
    this.#check();
    // Everything committed so far reaches the backend first, so the scan
    // misses no result acknowledged before this call.
    await this.settled();
    return this.#read(async () => {
      const kept: ResultSummary[] = [];
      for await (const summary of this.#backend.scanResults(resource)) {
        kept.push(summary);
        // Memory stays within twice the limit however many results there are.
        if (kept.length >= 2 * limit) kept.splice(0, kept.length, ...newestFirst(kept).slice(0, limit));
      }
      return newestFirst(kept).slice(0, limit);
    });
  }

  whenFailed(): Promise<Error> {
    return this.#failed;
  }

  close(): Promise<void> {
    // Every caller waits for the same drain: a second close() must not
    // report the storage released while a batch is still being synced.
    this.#closing ??= (async () => {
      this.#closed = true;
      try {
        await this.settled();
      } finally {
        await this.#backend.close();
      }
    })();
    return this.#closing;
  }

  #flush(): void {
    if (this.#inFlight || this.#open.ops.length === 0 || this.#failure) return;
    const batch = this.#open;
    this.#open = newBatch();
    this.#inFlight = batch;
    this.#stats.batches++;
    batch.number = this.#stats.batches;
    let written: Promise<void>;
    try {
      written = this.#backend.writeBatch(batch.ops);
    } catch (error) {
      written = Promise.reject(error);
    }
    written.then(
      () => {
        this.#inFlight = undefined;
        this.#stats.durableOps += batch.ops.length;
        // A key re-committed in a later batch keeps that newer overlay entry.
        for (const key of batch.keys) if (this.#overlay.get(key)?.batch === batch) this.#overlay.delete(key);
        batch.resolve({ batch: batch.number, ops: batch.ops.length });
        this.#flush();
        try {
          this.#onBatch?.({ ops: batch.ops.length });
        } catch {
          // A metrics hook must never stall or fail the commit pipeline.
        }
      },
      (error: unknown) => this.#fail(error),
    );
  }

  async #read<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      // A read cut short by close() is not a storage failure.
      if (this.#closed) throw new StoreFailedError('sink storage is closed', { cause: error });
      this.#fail(error);
      throw this.#failure ?? error;
    }
  }

  #fail(cause: unknown): void {
    if (this.#failure) return;
    const failure = new StoreFailedError(`sink storage failed: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.#failure = failure;
    // Fail-stop: nothing pending may ever be acknowledged, and nothing held
    // in the overlay may be read again.
    this.#inFlight?.reject(failure);
    this.#open.reject(failure);
    this.#overlay.clear();
    this.#reportFailure(failure);
  }

  #check(): void {
    if (this.#failure) throw this.#failure;
    if (this.#closed) throw new StoreFailedError('sink storage is closed');
  }
}
