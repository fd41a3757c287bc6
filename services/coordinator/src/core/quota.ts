// V4: what one owner may cost the coordinator. A token bucket per owner
// bounds the rate of Acquires that may create state; RECORDS_FULL bounds the
// request records (R3) an owner and the whole service keep; the idle
// resource entries kept in memory are bounded too. Pure: time is
// the injected Clock, and state is freed once an owner is back within bounds.
import type { Clock } from '@fencer/common';

/** The V4 bounds of the coordinator core; every one configurable (`--max-...`). */
export interface CoreLimits {
  /** Request records kept at once, all owners together (R3 retention included). */
  readonly maxRequestRecords: number;
  /** Request records kept at once for one owner_id (the caller's identity under A3). */
  readonly maxRecordsPerOwner: number;
  /** Acquires per second one owner may make, sustained; bursts of this many in one go. */
  readonly maxAcquiresPerSecond: number;
  /**
   * Idle resource entries (no valid lease, nothing for L8 to do) kept in
   * memory as a cache; past it the least recently used are dropped and read
   * back from the store when next touched. 0 drops each as soon as it is idle.
   */
  readonly maxIdleResources: number;
}

/** Generous enough for any honest worker fleet, small enough that a flood costs a bounded few hundred MB. */
export const DEFAULT_CORE_LIMITS: CoreLimits = Object.freeze({
  maxRequestRecords: 100_000,
  maxRecordsPerOwner: 10_000,
  maxAcquiresPerSecond: 100,
  maxIdleResources: 10_000,
});

interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * Per-owner token buckets of capacity and refill `perSecond`. A full bucket
 * is indistinguishable from no bucket, so `prune` drops those: memory
 * follows the owners that acquired within the last second or so.
 */
export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();

  constructor(
    private readonly clock: Clock,
    private readonly perSecond: number,
  ) {}

  /** Takes one token for `owner`: undefined if granted, else the ms until one is available. */
  take(owner: string): number | undefined {
    const bucket = this.#refilled(owner);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.#buckets.set(owner, bucket);
      return undefined;
    }
    return Math.ceil(((1 - bucket.tokens) * 1000) / this.perSecond);
  }

  /** Drops the buckets that have refilled completely. */
  prune(): void {
    for (const owner of [...this.#buckets.keys()])
      if (this.#refilled(owner).tokens >= this.perSecond) this.#buckets.delete(owner);
  }

  /** Owners with a bucket in memory; for tests. */
  get size(): number {
    return this.#buckets.size;
  }

  #refilled(owner: string): Bucket {
    const nowMs = this.clock.nowMs();
    const bucket = this.#buckets.get(owner) ?? { tokens: this.perSecond, atMs: nowMs };
    bucket.tokens = Math.min(this.perSecond, bucket.tokens + ((nowMs - bucket.atMs) * this.perSecond) / 1000);
    bucket.atMs = nowMs;
    return bucket;
  }
}

/**
 * V4's "logged once per offender": `first` is true the first time `owner`
 * is refused for `reason`, false until `forgive(owner)` (its next Acquire
 * that passes every limit). Memory follows the owners currently refused.
 */
export class OffenderLog {
  readonly #refused = new Map<string, Set<string>>();

  /** At most this many owners are remembered; past it, new offenders are not logged one by one. */
  constructor(private readonly maxOffenders = 1_000) {}

  first(owner: string, reason: string): boolean {
    const reasons = this.#refused.get(owner) ?? new Set<string>();
    if (reasons.has(reason) || (reasons.size === 0 && this.#refused.size >= this.maxOffenders)) return false;
    reasons.add(reason);
    this.#refused.set(owner, reasons);
    return true;
  }

  forgive(owner: string): void {
    this.#refused.delete(owner);
  }
}
