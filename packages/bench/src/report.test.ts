// The arithmetic of the tables: medians, and ratios that only ever divide
// figures measured in the same repetition.
import { describe, expect, it } from 'vitest';
import { goalResults, goalsTable, median, ratios, ratiosTable, summarize, type RecordedMeasurement } from './report.js';
import type { BenchCase, Goal } from './cases.js';

const measured = (id: string, repetition: number, concurrency: number, opsPerSecond: number): RecordedMeasurement => ({
  case: id,
  repetition,
  concurrency,
  operations: opsPerSecond,
  seconds: 1,
  opsPerSecond,
  p50Ms: 1_000 / opsPerSecond,
  p99Ms: 2_000 / opsPerSecond,
  cpuUsPerOp: { server: opsPerSecond / 10, bench: 1 },
});

const benchCase = (id: string): BenchCase => ({
  id,
  title: id,
  kind: 'raw',
  open: () => Promise.reject(new Error('not opened')),
});

describe('median', () => {
  it.each([
    [[3], 3],
    [[5, 1, 3], 3],
    [[4, 1, 3, 2], 2.5],
  ])('of %j is %d', (values, expected) => expect(median(values)).toBe(expected));
});

describe('ratios', () => {
  it('divides within each repetition, then takes the median, never mixing repetitions', () => {
    // Across repetitions the machine drifts: a is always twice b within one.
    const runs = [
      measured('a', 1, 1, 200),
      measured('b', 1, 1, 100),
      measured('a', 2, 1, 2_000),
      measured('b', 2, 1, 1_000),
      measured('a', 3, 1, 60),
      measured('b', 3, 1, 30),
    ];
    const [ratio] = ratios(runs, [{ title: 'a / b', numerator: 'a', denominator: 'b' }], [1], 3);
    expect(ratio!.byConcurrency).toEqual([{ concurrency: 1, median: 2, perRepetition: [2, 2, 2] }]);
  });

  it('is null, and shown as –, where one side was not measured', () => {
    const summaries = ratios(
      [measured('a', 1, 16, 10)],
      [{ title: 'a / b', numerator: 'a', denominator: 'b' }],
      [16],
      1,
    );
    expect(summaries[0]!.byConcurrency[0]).toEqual({ concurrency: 16, median: null, perRepetition: [] });
    expect(ratiosTable(summaries, [16]).split('\n').at(-1)).toBe('| a / b                       |       – |');
  });
});

describe('summarize', () => {
  it('takes the median of each figure over repetitions, per case and concurrency, operations summed', () => {
    const runs = [
      measured('a', 1, 1, 100),
      measured('a', 2, 1, 300),
      measured('a', 3, 1, 200),
      measured('a', 1, 4, 50),
    ];
    const [conc1, conc4] = summarize(runs, [benchCase('a'), benchCase('unmeasured')], [1, 4]);
    expect(conc1).toMatchObject({ case: 'a', concurrency: 1, operations: 600, opsPerSecond: 200, p50Ms: 5 });
    expect(conc1!.cpuUsPerOp).toEqual({ server: 20, bench: 1 });
    expect(conc4).toMatchObject({ case: 'a', concurrency: 4, operations: 50 });
  });
});

describe('goals (issue 23)', () => {
  const goal = (measure: Goal['measure'], bound: number, concurrency = 1): Goal => ({
    title: `a / b ${measure}`,
    numerator: 'a',
    denominator: 'b',
    concurrency,
    measure,
    bound,
  });
  // a is 1.5x b's throughput in both repetitions, so its p50 is 1/1.5 of b's.
  const runs = [measured('a', 1, 1, 150), measured('b', 1, 1, 100), measured('a', 2, 1, 300), measured('b', 2, 1, 200)];

  it('holds a throughput goal at or above its bound, a p50 goal at or below it, and says which fell short', () => {
    const results = goalResults(
      runs,
      [goal('throughput', 1.5), goal('throughput', 1.6), goal('p50', 0.7), goal('p50', 0.6), goal('throughput', 1, 64)],
      2,
    );
    expect(results.map((r) => r.held)).toEqual([true, false, true, false, null]);
    expect(results[2]!.measured.median).toBeCloseTo(1 / 1.5, 12);
    const rows = goalsTable(results)
      .split('\n')
      .slice(2)
      .map((row) =>
        row
          .split('|')
          .map((cell) => cell.trim())
          .slice(1, -1),
      );
    expect(rows).toEqual([
      ['a / b throughput', '1', '1.50×', '≥ 1.50×', 'held', '1.50–1.50×, 2 of 2 held'],
      ['a / b throughput', '1', '1.50×', '≥ 1.60×', 'short', '1.50–1.50×, 0 of 2 held'],
      ['a / b p50', '1', '0.67×', '≤ 0.70×', 'held', '0.67–0.67×, 2 of 2 held'],
      ['a / b p50', '1', '0.67×', '≤ 0.60×', 'short', '0.67–0.67×, 0 of 2 held'],
      ['a / b throughput', '64', '–', '≥ 1.00×', 'not measured', '–'],
    ]);
  });

  it("counts the repetitions whose own ratio met the bound, so a median decided by the host's noise shows", () => {
    // a/b: 0.70, 1.00 and 0.82 across three repetitions; the median 0.82 falls short of 0.85.
    const noisy = [70, 100, 82].flatMap((a, i) => [measured('a', i + 1, 1, a), measured('b', i + 1, 1, 100)]);
    const [throughput, p50] = goalResults(noisy, [goal('throughput', 0.85), goal('p50', 1.15)], 3);
    expect([throughput!.held, throughput!.heldInRepetitions]).toEqual([false, 1]);
    // p50s scale inversely: 1/0.70, 1/1.00, 1/0.82 = 1.43, 1.00, 1.22; only the second is at most 1.15.
    expect([p50!.held, p50!.heldInRepetitions]).toEqual([false, 1]);
    expect(goalsTable([throughput!, p50!])).toContain('| 0.70–1.00×, 1 of 3 held |');
    expect(goalsTable([throughput!, p50!])).toContain('| 1.00–1.43×, 1 of 3 held |');
  });
});
