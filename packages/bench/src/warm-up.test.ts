// When a warm-up stops: once two windows in a row gain less than 5 % on the
// best before them, or at its bound.
import { describe, expect, it } from 'vitest';
import { MAX_WINDOWS, warmUntilSteady } from './warm-up.js';

/** A window that yields the next of `rates` each time, counting how often it ran. */
function windows(rates: readonly number[]) {
  let ran = 0;
  return {
    window: async () => rates[ran++]!,
    ran: () => ran,
  };
}

describe('warmUntilSteady', () => {
  it('runs while windows gain at least 5 % on the best before them, and stops after two in a row that do not', async () => {
    const run = windows([135, 185, 216, 247, 255, 258, 400]);
    expect(await warmUntilSteady(run.window)).toEqual([135, 185, 216, 247, 255, 258]);
    expect(run.ran()).toBe(6);
  });

  it('goes on past one slow window when the next one gains on the best', async () => {
    // 226 is the shared machine's noise; 300 gains on 281, so the count starts again.
    expect(await warmUntilSteady(windows([281, 226, 300, 290, 301, 500]).window)).toEqual([281, 226, 300, 290, 301]);
  });

  it('runs at most its bound of windows when every window gains', async () => {
    const rising = Array.from({ length: 40 }, (_, i) => 100 * 1.1 ** i);
    const run = windows(rising);
    expect(await warmUntilSteady(run.window)).toHaveLength(MAX_WINDOWS);
    expect(run.ran()).toBe(MAX_WINDOWS);
    expect(await warmUntilSteady(windows(rising).window, 3)).toEqual(rising.slice(0, 3));
  });
});
