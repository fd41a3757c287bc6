// Holding a lease from a worker's side: acquire it idempotently (R1, R4),
// renew it at about a third of its TTL (L4), and say the moment it must be
// taken as lost. The local deadline is counted from when each Acquire or
// Renew was *sent*, minus a margin: the coordinator's lease cannot have
// started before the request left, so the worker's view of its lease ends no
// later than the coordinator's (L1), unless the clocks run at rates further
// apart than the margin covers.
//
// The signal is advice for the worker (stop computing, do not start new
// writes); it is not what keeps stale writes out. A pause can come between
// a check of the signal and the write it guards. Only the sink's fence
// check (F1) stops a stale write, and FencedWriter leaves it to the sink.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '@fencer/common';
import type { CoordinatorConnection, LeaseGrant, SinkRef } from './connection.js';
import { FencerError, LeaseHeldError, LeaseLostError, toFencerError } from './errors.js';
import { backoffMs, DEFAULT_RETRY_POLICY, sleep, withRetries, type RetryPolicy } from './retry.js';

/** What a fenced write needs of a lease: where, which token, and whether it is known lost. */
export interface FencingLease {
  readonly resource: string;
  readonly token: bigint;
  /** The sink the grant names (P3): where writes under it go. */
  readonly sink?: SinkRef;
  /** Aborted, with a FencerError as reason, once the lease is known lost. */
  readonly signal?: AbortSignal;
  /** Called by a writer whose write was refused as stale: the lease is gone for good. */
  abandon?(reason: FencerError): void;
}

/** How to acquire and keep one lease. */
export interface LeaseOptions {
  readonly resource: string;
  readonly ownerId: string;
  /** > 0, new for each restart of the owner (PROTOCOL.md's incarnation); default: when this process started, in ms since the epoch. */
  readonly incarnation?: bigint;
  /** Lease length asked for, in ms (V2: 100..86,400,000). */
  readonly ttlMs: number;
  /** The acquisition's request id (R4); default a fresh random UUID. Retries of this acquisition reuse it. */
  readonly requestId?: string;
  /** How often to renew, in ms; default ttlMs / 3. */
  readonly renewEveryMs?: number;
  /** Taken off the local deadline for clock-rate differences, in ms; default max(10, ttlMs / 10). */
  readonly marginMs?: number;
  /** Spacing of retries on transient failures (Acquire: until the attempts run out; Renew: until the local deadline). */
  readonly retry?: RetryPolicy;
  /** The local deadline's clock; systemClock by default. */
  readonly clock?: Clock;
  /** Gives up the acquisition when aborted (the last attempt's error is thrown). */
  readonly signal?: AbortSignal;
  /** Called after each successful renewal. */
  readonly onRenewed?: (lease: LeaseGrant) => void;
}

// Process start on the wall clock: an identifier that differs across
// restarts of the same owner, never used for time arithmetic.
const PROCESS_INCARNATION = BigInt(Math.floor(performance.timeOrigin));

/**
 * A held lease, renewed in the background until it is released or lost.
 * `signal` aborts (reason: a LeaseLostError, or the FencerError a renewal
 * was refused with) the moment the lease must be taken as lost. Release it
 * with `release()` or `await using`.
 */
export class LeaseKeeper implements FencingLease, AsyncDisposable {
  readonly resource: string;
  readonly ownerId: string;
  readonly incarnation: bigint;
  readonly token: bigint;
  readonly sink?: SinkRef;
  /** The request id this lease was acquired with. */
  readonly requestId: string;
  /** True when the coordinator answered with an earlier attempt's recorded grant (R1). */
  readonly replayed: boolean;

  readonly #coordinator: CoordinatorConnection;
  readonly #clock: Clock;
  readonly #retry: RetryPolicy;
  readonly #renewEveryMs: number;
  readonly #marginMs: number;
  readonly #onRenewed: ((lease: LeaseGrant) => void) | undefined;
  readonly #lost = new AbortController();
  #deadlineMs: number;
  #renewTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  #release: Promise<boolean> | undefined;

  /**
   * Acquires a lease: one request id for every attempt, transient failures
   * (UnavailableError) retried with backoff, anything else thrown as its
   * typed error (LeaseHeldError when someone holds it). A replayed grant
   * that has already ended is thrown as LeaseLostError GRANT_ENDED.
   */
  static async acquire(coordinator: CoordinatorConnection, options: LeaseOptions): Promise<LeaseKeeper> {
    const clock = options.clock ?? systemClock;
    const request = {
      requestId: options.requestId ?? randomUUID(),
      resource: options.resource,
      ownerId: options.ownerId,
      incarnation: options.incarnation ?? PROCESS_INCARNATION,
      ttlMs: options.ttlMs,
    };
    let sentAtMs = 0;
    const { lease, replayed } = await withRetries(
      options.retry ?? DEFAULT_RETRY_POLICY,
      () => {
        sentAtMs = clock.nowMs();
        return coordinator.acquire(request, options.signal ? { signal: options.signal } : {});
      },
      {
        shouldRetry: (error) => error instanceof FencerError && error.retryable && !(error instanceof LeaseHeldError),
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    if (replayed && lease.remainingMs === 0) {
      throw LeaseLostError.local(
        'GRANT_ENDED',
        `the grant of token ${lease.token} recorded for request ${request.requestId} has already ended`,
      );
    }
    return new LeaseKeeper(coordinator, options, clock, request.requestId, replayed, lease, sentAtMs);
  }

  private constructor(
    coordinator: CoordinatorConnection,
    options: LeaseOptions,
    clock: Clock,
    requestId: string,
    replayed: boolean,
    lease: LeaseGrant,
    sentAtMs: number,
  ) {
    this.#coordinator = coordinator;
    this.#clock = clock;
    this.#retry = options.retry ?? DEFAULT_RETRY_POLICY;
    this.#renewEveryMs = options.renewEveryMs ?? lease.ttlMs / 3;
    this.#marginMs = options.marginMs ?? Math.max(10, lease.ttlMs / 10);
    this.#onRenewed = options.onRenewed;
    this.resource = lease.resource;
    this.ownerId = lease.ownerId;
    this.incarnation = lease.incarnation;
    this.token = lease.token;
    if (lease.sink) this.sink = lease.sink;
    this.requestId = requestId;
    this.replayed = replayed;
    this.#deadlineMs = sentAtMs + lease.remainingMs - this.#marginMs;
    this.#armDeadline();
    this.#scheduleRenew(sentAtMs + this.#renewEveryMs);
  }

  /** Aborts once the lease is lost or released; its reason says why (a FencerError). */
  get signal(): AbortSignal {
    return this.#lost.signal;
  }

  /** The local deadline on the keeper's clock, in ms: past it, the lease counts as lost. */
  get deadlineMs(): number {
    return this.#deadlineMs;
  }

  /** Stops renewing and fires the signal with `reason`, without telling the coordinator. */
  abandon(reason: FencerError): void {
    if (this.#lost.signal.aborted) return;
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#deadlineTimer);
    this.#lost.abort(reason);
  }

  /**
   * Stops renewing, fires the signal (RELEASED unless already lost) and
   * frees the resource at the coordinator (L5), retrying transient failures.
   * Resolves true if this call freed it, false if the lease was no longer
   * this holder's. Calling it again returns the first call's answer.
   */
  release(): Promise<boolean> {
    this.#release ??= (async () => {
      this.abandon(
        LeaseLostError.local('RELEASED', `the lease on ${this.resource} (token ${this.token}) was released`),
      );
      return withRetries(
        this.#retry,
        () =>
          this.#coordinator.release({
            resource: this.resource,
            ownerId: this.ownerId,
            incarnation: this.incarnation,
            token: this.token,
          }),
        { shouldRetry: (error) => error instanceof FencerError && error.retryable },
      );
    })();
    return this.#release;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  #armDeadline(): void {
    clearTimeout(this.#deadlineTimer);
    const check = () => {
      const leftMs = this.#deadlineMs - this.#clock.nowMs();
      if (leftMs > 0) this.#deadlineTimer = setTimeout(check, leftMs);
      else this.#loseLocally();
    };
    check();
  }

  #loseLocally(): void {
    this.abandon(
      LeaseLostError.local(
        'LOCAL_DEADLINE_PASSED',
        `the lease on ${this.resource} (token ${this.token}) was not renewed before its local deadline`,
      ),
    );
  }

  #scheduleRenew(atMs: number): void {
    if (this.#lost.signal.aborted) return;
    this.#renewTimer = setTimeout(() => void this.#renew(), Math.max(0, atMs - this.#clock.nowMs()));
  }

  /** Renews until it succeeds, is refused, or the local deadline passes; transient failures are retried before that. */
  async #renew(): Promise<void> {
    const signal = this.#lost.signal;
    // Only the spacing of the policy applies here: the local deadline, not an attempt count, ends a renewal.
    const spacing = { ...this.#retry, maxAttempts: Number.POSITIVE_INFINITY };
    for (let attempt = 0; !signal.aborted; attempt++) {
      const sentAtMs = this.#clock.nowMs();
      const leftMs = this.#deadlineMs - sentAtMs;
      if (leftMs <= 0) return this.#loseLocally();
      try {
        const lease = await this.#coordinator.renew(
          {
            resource: this.resource,
            ownerId: this.ownerId,
            incarnation: this.incarnation,
            token: this.token,
            ttlMs: 0, // keep the TTL the lease has (L4)
          },
          { timeoutMs: leftMs, signal },
        );
        if (signal.aborted) return;
        this.#deadlineMs = Math.max(this.#deadlineMs, sentAtMs + lease.remainingMs - this.#marginMs);
        this.#armDeadline();
        this.#scheduleRenew(sentAtMs + this.#renewEveryMs);
        this.#onRenewed?.(lease);
        return;
      } catch (raw) {
        if (signal.aborted) return;
        const error = toFencerError(raw);
        if (!error.retryable) return this.abandon(error);
        const waitMs = Math.min(backoffMs(spacing, attempt) ?? 0, this.#deadlineMs - this.#clock.nowMs());
        await sleep(Math.max(0, waitMs), signal).catch(() => undefined);
      }
    }
  }
}
