import { describe, expect, it } from 'vitest';
import { hasSettled } from '@fencer/testkit';
import { DEFAULT_RETRY_POLICY, backoffMs, sleep, withRetries, type RetryPolicy } from './retry.js';

const policy = (random: number, overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({
  initialMs: 100,
  maxMs: 1_000,
  multiplier: 2,
  maxAttempts: 6,
  random: () => random,
  ...overrides,
});

describe('backoffMs (full jitter)', () => {
  it('grows the bound per retry up to maxMs, and draws the wait uniformly below it', () => {
    const top = policy(0.999_999);
    expect([0, 1, 2, 3, 4].map((retry) => backoffMs(top, retry))).toEqual([99, 199, 399, 799, 999]);
    expect([0, 1, 2, 3, 4].map((retry) => backoffMs(policy(0), retry))).toEqual([0, 0, 0, 0, 0]);
    expect(backoffMs(policy(0.5), 2)).toBe(200);
  });

  it('stops once maxAttempts attempts were made', () => {
    expect(backoffMs(policy(0.5), 4)).toBeDefined(); // the 6th attempt may still come
    expect(backoffMs(policy(0.5), 5)).toBeUndefined();
    expect(backoffMs(policy(0.5, { maxAttempts: 1 }), 0)).toBeUndefined();
  });

  it('refuses a policy that makes no sense', () => {
    expect(() => backoffMs(policy(0.5, { maxMs: 10 }), 0)).toThrow(RangeError);
    expect(() => backoffMs(policy(0.5, { maxAttempts: 0 }), 0)).toThrow(RangeError);
    expect(() => backoffMs(policy(0.5, { multiplier: 0.5 }), 0)).toThrow(RangeError);
  });

  it('the default policy waits at most 2 s per retry and stops after 8 attempts', () => {
    const defaults = { ...DEFAULT_RETRY_POLICY, random: () => 0.999_999 };
    expect(Math.max(...[0, 1, 2, 3, 4, 5, 6].map((retry) => backoffMs(defaults, retry)!))).toBe(1_999);
    expect(backoffMs(defaults, 7)).toBeUndefined();
  });
});

describe('sleep', () => {
  it('rejects with the reason as soon as its signal aborts, and at once if it already had', async () => {
    const abort = new AbortController();
    const waiting = sleep(60_000, abort.signal);
    expect(await hasSettled(waiting)).toBe(false);
    abort.abort(new Error('lease lost'));
    await expect(waiting).rejects.toThrow('lease lost');
    await expect(sleep(60_000, abort.signal)).rejects.toThrow('lease lost');
  });

  it('resolves after its time without a signal', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
  });
});

describe('withRetries', () => {
  const failing = (failures: number, errors: unknown[] = []) => {
    let calls = 0;
    return {
      attempt: (n: number) => {
        expect(n).toBe(calls++);
        if (calls <= failures) {
          const error = new Error(`failure ${calls}`);
          errors.push(error);
          return Promise.reject(error);
        }
        return Promise.resolve(`after ${calls} attempts`);
      },
      calls: () => calls,
    };
  };

  it('retries what shouldRetry accepts until an attempt succeeds', async () => {
    const run = failing(3);
    expect(await withRetries(policy(0), run.attempt, { shouldRetry: () => true })).toBe('after 4 attempts');
  });

  it('throws at once what shouldRetry declines, and the last error when attempts run out', async () => {
    const declined = failing(3);
    await expect(withRetries(policy(0), declined.attempt, { shouldRetry: () => false })).rejects.toThrow('failure 1');
    const exhausted = failing(10);
    await expect(
      withRetries(policy(0, { maxAttempts: 3 }), exhausted.attempt, { shouldRetry: () => true }),
    ).rejects.toThrow('failure 3');
    expect(exhausted.calls()).toBe(3);
  });

  it('an abort during the wait rethrows the last attempt error, not the abort', async () => {
    const controller = new AbortController();
    const run = failing(10);
    const pending = withRetries(policy(0.5, { initialMs: 60_000, maxMs: 60_000 }), run.attempt, {
      shouldRetry: () => true,
      signal: controller.signal,
    });
    expect(await hasSettled(pending)).toBe(false);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('failure 1');
  });
});
