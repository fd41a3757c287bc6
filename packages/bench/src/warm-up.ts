// The warm-up before a run's first repetition, not recorded: connections,
// LevelDB files, and above all V8's JIT. A Node server keeps optimizing its
// hot paths for many seconds (perf showed 92 % of V8's worker threads in
// TurboFan's concurrent compilation several seconds into a run, and an
// Acquire+Release at concurrency 1 still gaining after ten), while etcd, in
// Go, is compiled ahead of time. One fixed second measured Fencer's
// compiler against etcd's steady state; a coordinator in production runs
// for hours. So a case runs window after window, at every concurrency it is
// measured at, until it stops gaining: early stopping with a patience of
// two windows, so that one window slowed by the shared machine does not end
// the warm-up too soon.
//
// A plateau alone is not steady. V8 optimizes a function once it has run
// often enough, not after some seconds, and the functions of one path get
// there at different times: at concurrency 1 alone an Acquire+Release went
// 80 → 95 → 109 → 108 → 114 ops/s in one-second windows, counted as
// steady, then measured 139-149 in its repetitions; three cold processes
// passed 250 only after some 5,000 cycles. So a case must also have run a number
// of operations (--warm-up-operations), across its concurrencies, before it
// may count as steady; at concurrency 64 that takes seconds.

import type { Measurement } from './measure.js';

/** A window gains when it is this much faster than the best before it. */
export const STEADY_GAIN = 0.05;

/** Windows in a row that must not gain before the case counts as steady. */
export const PATIENCE = 2;

/** Operations a case runs in its warm-up before it may count as steady (--warm-up-operations' default). */
export const WARM_UP_OPERATIONS = 5_000;

/** At most this many windows per case and concurrency: a case that keeps gaining (or swinging), or never reaches its operations, does not stall the run. */
export const MAX_WINDOWS = 60;

/** Each warm-up window's length: a second, or half of `--seconds` when that is shorter (the test's 0.5-s runs). */
export const warmUpWindowSeconds = (seconds: number) => Math.min(1, seconds / 2);

/** What the warm-up reads of one window's measurement. */
export type WarmUpWindow = Pick<Measurement, 'opsPerSecond' | 'operations'>;

/** When a warm-up may stop. */
export interface WarmUpBounds {
  /** Operations the case must have run, these windows and `ranBefore` together, before it counts as steady. */
  readonly minOperations?: number;
  /** Operations the case ran in its warm-ups at other concurrencies: the same code, already called that often. */
  readonly ranBefore?: number;
  readonly maxWindows?: number;
}

/**
 * Runs `window` (one measured stretch) until PATIENCE windows in a row gain
 * less than STEADY_GAIN on the best before them and the case has run
 * `minOperations`, or `maxWindows` ran. Resolves to every window, in order.
 */
export async function warmUntilSteady(
  window: () => Promise<WarmUpWindow>,
  { minOperations = 0, ranBefore = 0, maxWindows = MAX_WINDOWS }: WarmUpBounds = {},
): Promise<WarmUpWindow[]> {
  const windows: WarmUpWindow[] = [];
  let ran = ranBefore;
  let best = 0;
  let withoutGain = 0;
  while (windows.length < maxWindows && (withoutGain < PATIENCE || ran < minOperations)) {
    const measured = await window();
    windows.push(measured);
    ran += measured.operations;
    const rate = measured.opsPerSecond;
    withoutGain = windows.length > 1 && rate < best * (1 + STEADY_GAIN) ? withoutGain + 1 : 0;
    best = Math.max(best, rate);
  }
  return windows;
}

/**
 * A warm-up's progress line: its windows, the operations its case has run
 * in warm-ups so far, and the rates (the first three and last four of a long one).
 */
export function warmUpText(windows: readonly WarmUpWindow[], ran: number): string {
  const rates = windows.map(({ opsPerSecond }) => opsPerSecond.toFixed(0));
  const shown = rates.length > 8 ? [...rates.slice(0, 3), '…', ...rates.slice(-4)] : rates;
  return `${windows.length} windows, ${ran} operations in all, ${shown.join(' → ')} ops/s`;
}
