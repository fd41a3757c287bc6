// The seeded schedule: the same seed gives the same faults, every fault
// heals within the run, and the concurrency and target limits hold for
// many seeds.
import { describe, expect, it } from 'vitest';
import { NEMESIS_KINDS, type NemesisKind } from './fault.js';
import { DEFAULT_TARGETS, schedule, type ScheduledFault, type ScheduleOptions } from './schedule.js';

const base: ScheduleOptions = { seed: 42, durationMs: 60_000, kinds: NEMESIS_KINDS };
const end = (fault: ScheduledFault) => fault.atMs + fault.durationMs;

/** The faults active at `atMs`. */
const activeAt = (faults: readonly ScheduledFault[], atMs: number) =>
  faults.filter((fault) => fault.atMs <= atMs && atMs < end(fault));

describe('schedule', () => {
  it('is a function of its seed: the same seed gives the same list, another seed another', () => {
    const first = schedule(base);
    expect(first.length).toBeGreaterThan(5);
    expect(schedule({ ...base })).toEqual(first);
    expect(schedule({ ...base, seed: 43 })).not.toEqual(first);
  });

  it.each([1, 2, 3, 7, 1_000_003])(
    'seed %i: faults in start order, inside the run, of the given kinds and targets',
    (seed) => {
      const kinds: NemesisKind[] = ['partition', 'pause', 'crash-wipe'];
      const faults = schedule({ ...base, seed, kinds, gapMs: [200, 900], faultMs: [100, 2_500] });
      expect(faults.length).toBeGreaterThan(0);
      expect(faults.map((fault) => fault.atMs)).toEqual(faults.map((fault) => fault.atMs).sort((a, b) => a - b));
      for (const [i, fault] of faults.entries()) {
        expect(kinds).toContain(fault.kind);
        expect(DEFAULT_TARGETS[fault.kind]).toContain(fault.target);
        expect(fault.durationMs).toBeGreaterThanOrEqual(100);
        expect(fault.durationMs).toBeLessThanOrEqual(2_500);
        expect(end(fault)).toBeLessThanOrEqual(base.durationMs);
        // One at a time by default, and a quiet gap of at least 200 ms after each heal.
        if (i > 0) expect(fault.atMs - end(faults[i - 1]!)).toBeGreaterThanOrEqual(200);
      }
    },
  );

  it.each([11, 12, 13])('seed %i: never more than maxConcurrent at once, never two on one target', (seed) => {
    const faults = schedule({ ...base, seed, maxConcurrent: 3, gapMs: [50, 300], faultMs: [500, 4_000] });
    expect(Math.max(...faults.map((fault) => activeAt(faults, fault.atMs).length))).toBe(3);
    for (const fault of faults) {
      const active = activeAt(faults, fault.atMs);
      expect(active.length).toBeLessThanOrEqual(3);
      expect(new Set(active.map((other) => other.target)).size).toBe(active.length);
    }
  });

  it.each([1, 2, 3])('seed %i: deals every kind once before any comes again', (seed) => {
    const faults = schedule({ ...base, seed, durationMs: 600_000 });
    for (let deal = 0; deal + NEMESIS_KINDS.length <= faults.length; deal += NEMESIS_KINDS.length) {
      const kinds = faults.slice(deal, deal + NEMESIS_KINDS.length).map((fault) => fault.kind);
      expect(new Set(kinds).size, `deal at fault ${deal}`).toBe(NEMESIS_KINDS.length);
    }
  });

  it('has every kind in a two-minute plan like the soak’s, whatever the seed', () => {
    for (let seed = 0; seed < 200; seed++) {
      const faults = schedule({ ...base, seed, durationMs: 120_000, faultMs: [300, 2_500], maxConcurrent: 2 });
      expect(new Set(faults.map((fault) => fault.kind)).size, `seed ${seed}`).toBe(NEMESIS_KINDS.length);
    }
  });

  it('takes targets from the options: workers to pause by name', () => {
    const faults = schedule({ ...base, kinds: ['pause'], targets: { pause: ['worker-a', 'worker-b'] } });
    expect(new Set(faults.map((fault) => fault.target))).toEqual(new Set(['worker-a', 'worker-b']));
  });

  it('plans nothing when no fault fits in the run', () => {
    expect(schedule({ ...base, durationMs: 400 })).toEqual([]);
  });

  it.each<[string, Partial<ScheduleOptions>]>([
    ['kinds must not be empty', { kinds: [] }],
    ['pause has no targets', { kinds: ['pause'], targets: { pause: [] } }],
    ['durationMs must be an integer >= 0', { durationMs: -1 }],
    ['gapMs must be integers [min, max] with 1 <= min <= max', { gapMs: [0, 10] }],
    ['faultMs must be integers [min, max] with 0 <= min <= max', { faultMs: [10, 5] }],
    ['maxConcurrent must be an integer >= 1', { maxConcurrent: 0 }],
  ])('throws RangeError: %s', (message, options) => {
    expect(() => schedule({ ...base, ...options })).toThrow(new RangeError(message));
  });
});
