// An in-memory DurableBackend for unit tests. Its "disk" survives a simulated
// crash (a new store over the same MemoryDisk), and a test can hold syncs
// back or make them fail, to observe pipelining, durability and fail-stop.
import type { FenceRecord, StoredResult } from '../../src/core/fence-policy.js';
import { GroupCommitStore, type DurableBackend } from '../../src/core/group-commit.js';
import { resultKey, type ResultSummary, type StoreOp } from '../../src/core/store.js';

/** What a crash does not lose: the synced state. Shared by successive stores in a test. */
export class MemoryDisk {
  readonly fences = new Map<string, FenceRecord>();
  readonly results = new Map<string, StoredResult>();
}

/**
 * Backend over a MemoryDisk. With `manualSync`, each batch waits until the
 * test calls `syncNext()` (or `failNext(error)`); otherwise batches are
 * "synced" on a later event-loop turn, as real I/O completes.
 */
export class MemoryBackend implements DurableBackend {
  readonly #waiting: { ops: readonly StoreOp[]; resolve(): void; reject(error: Error): void }[] = [];
  #closed = false;
  #broken: Error | undefined;

  constructor(
    readonly disk: MemoryDisk = new MemoryDisk(),
    private readonly options: { manualSync?: boolean } = {},
  ) {}

  async readFence(resource: string): Promise<FenceRecord | undefined> {
    this.#open();
    return this.disk.fences.get(resource);
  }

  async readResult(resource: string, resultId: string): Promise<StoredResult | undefined> {
    this.#open();
    return this.disk.results.get(resultKey(resource, resultId));
  }

  async *scanResults(resource: string): AsyncIterable<ResultSummary> {
    this.#open();
    const prefix = resultKey(resource, '');
    for (const [key, result] of this.disk.results)
      if (key.startsWith(prefix))
        yield { resultId: key.slice(prefix.length), token: result.token, sizeBytes: result.payload.byteLength };
  }

  writeBatch(ops: readonly StoreOp[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#open();
      const entry = { ops, resolve: () => (this.#apply(ops), resolve()), reject };
      if (this.options.manualSync) this.#waiting.push(entry);
      else setImmediate(entry.resolve); // a later event-loop turn, like real I/O
    });
  }

  /** Batches written but not yet synced (manual mode). */
  get waitingBatches(): number {
    return this.#waiting.length;
  }

  /** Syncs the oldest waiting batch; throws if there is none. */
  syncNext(): void {
    const next = this.#waiting.shift();
    if (!next) throw new Error('no batch is waiting to be synced');
    next.resolve();
  }

  /** Fails the oldest waiting batch with an I/O error; nothing of it reaches the disk. */
  failNext(error = new Error('EIO: simulated disk failure')): void {
    const next = this.#waiting.shift();
    if (!next) throw new Error('no batch is waiting to be synced');
    next.reject(error);
  }

  /** From now on every read and write fails, as on a dead disk. */
  breakDisk(error = new Error('EIO: simulated disk failure')): void {
    this.#broken = error;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #apply(ops: readonly StoreOp[]): void {
    for (const op of ops) {
      if (op.kind === 'fence') this.disk.fences.set(op.resource, op.record);
      else this.disk.results.set(resultKey(op.resource, op.resultId), op.result);
    }
  }

  #open(): void {
    if (this.#closed) throw new Error('memory backend is closed');
    if (this.#broken) throw this.#broken;
  }
}

/** A GroupCommitStore over a MemoryBackend; pass a disk to "reopen after a crash". */
export function memoryStore(
  disk = new MemoryDisk(),
  options: { manualSync?: boolean } = {},
): { store: GroupCommitStore; backend: MemoryBackend } {
  const backend = new MemoryBackend(disk, options);
  return { store: new GroupCommitStore(backend), backend };
}
