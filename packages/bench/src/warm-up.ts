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

/** A window gains when it is this much faster than the best before it. */
export const STEADY_GAIN = 0.05;

/** Windows in a row that must not gain before the case counts as steady. */
export const PATIENCE = 2;

/** At most this many windows per case and concurrency: a case that keeps gaining (or swinging) does not stall the run. */
export const MAX_WINDOWS = 15;

/** Each warm-up window's length: a second, or half of `--seconds` when that is shorter (the test's 0.5-s runs). */
export const warmUpWindowSeconds = (seconds: number) => Math.min(1, seconds / 2);

/**
 * Runs `window` (one measured stretch, resolving to its ops/s) until
 * PATIENCE windows in a row gain less than STEADY_GAIN on the best before
 * them, or `maxWindows` ran. Resolves to every window's ops/s, in order.
 */
export async function warmUntilSteady(
  window: () => Promise<number>,
  maxWindows: number = MAX_WINDOWS,
): Promise<number[]> {
  const rates: number[] = [];
  let best = 0;
  let withoutGain = 0;
  while (rates.length < maxWindows && withoutGain < PATIENCE) {
    const rate = await window();
    rates.push(rate);
    withoutGain = rates.length > 1 && rate < best * (1 + STEADY_GAIN) ? withoutGain + 1 : 0;
    best = Math.max(best, rate);
  }
  return rates;
}
