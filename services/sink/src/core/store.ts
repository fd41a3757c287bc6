// The storage port of the sink. Its contract is what makes F2 and F6 hold
// together with pipelining: a commit is visible to the very next read (so a
// decision made under the resource lock sees every earlier decision), and is
// acknowledged only once durable, with batches becoming durable in FIFO order.
import type { FenceRecord, StoredResult } from './fence-policy.js';

/** One stored result as ListResults shows it: no payload, its size. */
export interface ResultSummary {
  readonly resultId: string;
  /** The token it was written with. */
  readonly token: bigint;
  readonly sizeBytes: number;
}

/** One change. All ops of one `commit` call become durable atomically, together. */
export type StoreOp =
  | { readonly kind: 'fence'; readonly resource: string; readonly record: FenceRecord }
  | { readonly kind: 'result'; readonly resource: string; readonly resultId: string; readonly result: StoredResult };

/**
 * The sink's state: fences and results. After a commit failure the store is
 * failed for good (fail-stop): every pending and later call rejects with
 * StoreFailedError, because in-memory state can no longer be trusted.
 */
/** The synced batch (group commit) that a commit's ops were written in. */
export interface JoinedBatch {
  /** The batch's number: 1 for the store's first since it opened. */
  readonly batch: number;
  /** Ops in the whole batch, this commit's and others'. */
  readonly ops: number;
}

export interface SinkStore {
  /** The latest fence, including committed-but-not-yet-durable changes. For use under the resource's lock. */
  fence(resource: string): Promise<FenceRecord | undefined>;
  /** The latest result, including committed-but-not-yet-durable changes. For use under the resource's lock. */
  result(resource: string, resultId: string): Promise<StoredResult | undefined>;
  /**
   * Makes `ops` visible to the reads above before returning (synchronously),
   * and resolves once they are durable (fsynced). Batches become durable in
   * the order they were committed. Rejects with StoreFailedError on I/O error.
   * All ops or none: ops that cannot be stored reject the whole call.
   * Resolves with the synced batch the ops joined, undefined if there were none.
   */
  commit(ops: readonly StoreOp[]): Promise<JoinedBatch | undefined>;
  /**
   * Resolves once everything committed before this call is durable, with
   * the newest batch that was pending then (undefined if none); rejects if
   * the store failed.
   */
  settled(): Promise<JoinedBatch | undefined>;
  /** The fence as durable state has it: a pending value is returned only after its batch is synced. */
  durableFence(resource: string): Promise<FenceRecord | undefined>;
  /** The result as durable state has it: a pending value is returned only after its batch is synced. */
  durableResult(resource: string, resultId: string): Promise<StoredResult | undefined>;
  /**
   * The resource's durable results with the highest tokens, at most `limit`,
   * by token descending then result_id ascending; waits until everything
   * committed before the call is durable. Reads every result of the resource.
   */
  durableResults(resource: string, limit: number): Promise<ResultSummary[]>;
  /** Resolves with the cause once the store has failed; never rejects. */
  whenFailed(): Promise<Error>;
  /** Waits for pending batches, then releases the storage; idempotent (every call waits). Later calls reject. */
  close(): Promise<void>;
}

/**
 * The one key of a (resource, result_id) pair, in memory and on disk:
 * resource NUL result_id. It is unambiguous only because V2 forbids control
 * characters in resource, so a NUL here is a bug that would let two pairs
 * share one key (S6): it throws TypeError instead.
 */
export function resultKey(resource: string, resultId: string): string {
  if (resource.includes('\u0000')) throw new TypeError('a resource containing NUL reached the store (V2 forbids it)');
  return `${resource}\u0000${resultId}`;
}

/**
 * Throws TypeError unless `record` can be stored unambiguously: on disk a NUL
 * ends grant_id when an owner follows (A5), which is sound only because V2
 * forbids control characters in grant_id. A NUL here is a bug; the store
 * checks before committing, so it never reaches a batch.
 */
export function assertStorableFence(record: FenceRecord): void {
  if (record.grantId.includes('\u0000'))
    throw new TypeError('a grant_id containing NUL reached the store (V2 forbids it)');
}
