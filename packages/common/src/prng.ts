/**
 * A seeded pseudo-random generator (mulberry32): the same seed gives the
 * same sequence on every machine, so a randomized test or a chaos schedule
 * names its seed and replays exactly. Not for anything secret.
 */
export function prng(seed: number): {
  /** A number in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included (integers, min <= max). */
  int(min: number, max: number): number;
  /** One of `items` (non-empty). */
  pick<T>(items: readonly T[]): T;
} {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}
