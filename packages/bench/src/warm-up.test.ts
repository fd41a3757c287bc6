// When a warm-up stops: once two windows in a row gain less than 5 % on the
// best before them and the case has run its operations, or at its bound.
import { describe, expect, it } from 'vitest';
import { MAX_WINDOWS, warmUntilSteady, warmUpText, type WarmUpWindow } from './warm-up.js';

/** A window that yields the next of `rates` each time (as many operations as its rate: one-second windows), counting how often it ran. */
function windows(rates: readonly number[]) {
  let ran = 0;
  return {
    window: async (): Promise<WarmUpWindow> => {
      const opsPerSecond = rates[ran++]!;
      return { opsPerSecond, operations: opsPerSecond };
    },
    ran: () => ran,
  };
}

const ratesOf = (measured: readonly WarmUpWindow[]) => measured.map(({ opsPerSecond }) => opsPerSecond);

describe('warmUntilSteady', () => {
  it('runs while windows gain at least 5 % on the best before them, and stops after two in a row that do not', async () => {
    const run = windows([135, 185, 216, 247, 255, 258, 400]);
    expect(ratesOf(await warmUntilSteady(run.window))).toEqual([135, 185, 216, 247, 255, 258]);
    expect(run.ran()).toBe(6);
  });

  it('goes on past one slow window when the next one gains on the best', async () => {
    // 226 is the shared machine's noise; 300 gains on 281, so the count starts again.
    expect(ratesOf(await warmUntilSteady(windows([281, 226, 300, 290, 301, 500]).window))).toEqual([
      281, 226, 300, 290, 301,
    ]);
  });

  it('does not count a plateau as steady before the case has run its operations', async () => {
    // The conc-1 Acquire+Release seen cold: flat for three windows, then V8 optimized the rest of its path.
    const cold = [80, 95, 109, 108, 114, 112, 150, 210, 250, 252, 251, 400];
    expect(ratesOf(await warmUntilSteady(windows(cold).window, { minOperations: 1_500 }))).toEqual(cold.slice(0, 11));
    // Without the floor, the plateau ends it.
    expect(ratesOf(await warmUntilSteady(windows(cold).window))).toEqual(cold.slice(0, 5));
  });

  it('counts the operations the case ran at its other concurrencies towards the floor', async () => {
    const flat = [300, 301, 302, 303, 304];
    expect(await warmUntilSteady(windows(flat).window, { minOperations: 1_000, ranBefore: 1_000 })).toHaveLength(3);
    expect(await warmUntilSteady(windows(flat).window, { minOperations: 1_000, ranBefore: 0 })).toHaveLength(4);
  });

  it('runs at most its bound of windows when every window gains, or the operations never add up', async () => {
    const rising = Array.from({ length: 80 }, (_, i) => 100 * 1.1 ** i);
    const run = windows(rising);
    expect(await warmUntilSteady(run.window)).toHaveLength(MAX_WINDOWS);
    expect(run.ran()).toBe(MAX_WINDOWS);
    expect(ratesOf(await warmUntilSteady(windows(rising).window, { maxWindows: 3 }))).toEqual(rising.slice(0, 3));
    const slow = Array.from({ length: 80 }, () => 10);
    expect(await warmUntilSteady(windows(slow).window, { minOperations: 1_000_000 })).toHaveLength(MAX_WINDOWS);
  });
});

describe('warmUpText', () => {
  it('names the windows, the operations so far and every rate of a short warm-up', () => {
    const measured = [80.4, 95, 109.6].map((opsPerSecond) => ({ opsPerSecond, operations: 0 }));
    expect(warmUpText(measured, 285)).toBe('3 windows, 285 operations in all, 80 → 95 → 110 ops/s');
  });

  it('shows the first three and the last four rates of a long one', () => {
    const measured = Array.from({ length: 12 }, (_, i) => ({ opsPerSecond: i + 1, operations: 0 }));
    expect(warmUpText(measured, 5_000)).toBe(
      '12 windows, 5000 operations in all, 1 → 2 → 3 → … → 9 → 10 → 11 → 12 ops/s',
    );
  });
});
