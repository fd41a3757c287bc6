// How far the processes of a run may disagree on the shared clock
// (`performance.timeOrigin + performance.now()`, see @fencer/worker's
// events). Each process fixes its time origin from the wall clock once, at
// start, and then counts on the monotonic clock all processes share, so two
// processes disagree by a constant: the wall clock's steps and slewing
// between their starts, plus the error of reading it. That constant is
// measured the way NTP and Cristian's algorithm do: the supervisor asks a
// process for its reading and notes its own before and after; the other's
// reading was taken in between, so its offset lies within the round trip.

/** One round trip: the supervisor's readings when it asked and when the answer arrived, and the process's reading (ms). */
export interface ClockSample {
  readonly askedMs: number;
  readonly readMs: number;
  readonly answeredMs: number;
}

/** The offsets (the process's clock minus the supervisor's, ms) a process's samples allow. */
export interface OffsetRange {
  readonly minMs: number;
  readonly maxMs: number;
}

/**
 * The offset range that all of a process's samples allow (their
 * intersection, since the offset is constant); if they allow none in common
 * (the offset moved while they were taken, a wall-clock step within a
 * process's start), the range that any of them allows. RangeError without
 * samples.
 */
export function offsetRange(samples: readonly ClockSample[]): OffsetRange {
  if (samples.length === 0) throw new RangeError('no clock sample');
  const ranges = samples.map((s) => ({ minMs: s.readMs - s.answeredMs, maxMs: s.readMs - s.askedMs }));
  const minMs = Math.max(...ranges.map((r) => r.minMs));
  const maxMs = Math.min(...ranges.map((r) => r.maxMs));
  if (minMs <= maxMs) return { minMs, maxMs };
  return { minMs: Math.min(...ranges.map((r) => r.minMs)), maxMs: Math.max(...ranges.map((r) => r.maxMs)) };
}

/**
 * The most any two readings of the processes measured and of the
 * supervisor itself (offset 0) may disagree (ms), but never less than
 * `floorMs`: what the checker's `clockUncertaintyMs` should be.
 */
export function clockUncertaintyMs(offsets: readonly OffsetRange[], floorMs: number): number {
  const highest = Math.max(0, ...offsets.map((o) => o.maxMs));
  const lowest = Math.min(0, ...offsets.map((o) => o.minMs));
  return Math.max(highest - lowest, floorMs);
}
