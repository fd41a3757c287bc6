// When to try again: exponential backoff with full jitter (each wait drawn
// uniformly from [0, min(max, initial * multiplier^attempt)]), so workers
// that failed together do not retry together. Injectable, so tests and
// callers choose the schedule and the randomness.

/** How retries are spaced and when they stop. */
export interface RetryPolicy {
  /** Upper bound of the first wait, in ms. */
  readonly initialMs: number;
  /** No wait is longer than this, in ms. */
  readonly maxMs: number;
  /** Growth of the bound per attempt (> 1). */
  readonly multiplier: number;
  /** Attempts in all, the first included (>= 1). */
  readonly maxAttempts: number;
  /** A number in [0, 1); Math.random by default. */
  readonly random?: () => number;
}

/** 50 ms doubling up to 2 s, 8 attempts: about 6 s of retries at most. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  initialMs: 50,
  maxMs: 2_000,
  multiplier: 2,
  maxAttempts: 8,
});

/**
 * The wait before retry number `retry` (0 for the first retry), or undefined
 * when the policy allows no more attempts. Throws RangeError on a policy
 * that makes no sense (a bug in the caller).
 */
export function backoffMs(policy: RetryPolicy, retry: number): number | undefined {
  if (!(
    policy.initialMs >= 0 &&
    policy.maxMs >= policy.initialMs &&
    policy.multiplier >= 1 &&
    policy.maxAttempts >= 1
  )) {
    throw new RangeError(`invalid retry policy ${JSON.stringify(policy)}`);
  }
  if (retry + 1 >= policy.maxAttempts) return undefined;
  const bound = Math.min(policy.maxMs, policy.initialMs * policy.multiplier ** retry);
  return Math.floor((policy.random ?? Math.random)() * bound);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts (at once if it already has). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as unknown);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as unknown);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `attempt` (numbered from 0) until it resolves, throws an error that
 * `shouldRetry` declines, or the policy has no attempts left; between
 * attempts it waits backoffMs. An abort of `signal` ends the wait and
 * rethrows the last attempt's error: its outcome is what the caller must
 * deal with, not the abort.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<T>,
  options: { readonly shouldRetry: (error: unknown) => boolean; readonly signal?: AbortSignal },
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      const waitMs = options.shouldRetry(error) ? backoffMs(policy, n) : undefined;
      if (waitMs === undefined) throw error;
      await sleep(waitMs, options.signal).catch(() => {
        throw error;
      });
    }
  }
}
