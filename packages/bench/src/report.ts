// From measurements to what `fencer bench` prints: medians over
// repetitions per case and concurrency, same-run ratios (each repetition's
// ratio from cases measured side by side, then the median of those), and
// the tables, as Markdown so they paste into the README as they are.
import type { BenchCase, Goal, RatioDefinition } from './cases.js';
import { markdownTable } from '@fencer/common';
import { BENCH_PROCESS, type Measurement } from './measure.js';

/** A measurement with where it belongs in the run. */
export interface RecordedMeasurement extends Measurement {
  readonly case: string;
  readonly repetition: number;
}

/** One case at one concurrency, medians over repetitions. */
export interface CaseSummary {
  readonly case: string;
  readonly title: string;
  readonly concurrency: number;
  readonly operations: number;
  readonly opsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerOp: Readonly<Record<string, number>>;
}

/** One ratio at one concurrency: each repetition's, and their median; null when a side was not measured. */
export interface RatioAt {
  readonly concurrency: number;
  readonly median: number | null;
  readonly perRepetition: readonly number[];
}

export interface RatioSummary extends RatioDefinition {
  readonly byConcurrency: readonly RatioAt[];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Medians per case and concurrency, in the order of `cases` then `concurrencies`. */
export function summarize(
  measurements: readonly RecordedMeasurement[],
  cases: readonly BenchCase[],
  concurrencies: readonly number[],
): CaseSummary[] {
  const summaries: CaseSummary[] = [];
  for (const benchCase of cases) {
    for (const concurrency of concurrencies) {
      const runs = measurements.filter((m) => m.case === benchCase.id && m.concurrency === concurrency);
      if (runs.length === 0) continue;
      const cpuUsPerOp: Record<string, number> = {};
      for (const name of Object.keys(runs[0]!.cpuUsPerOp))
        cpuUsPerOp[name] = median(runs.map((r) => r.cpuUsPerOp[name]!));
      summaries.push({
        case: benchCase.id,
        title: benchCase.title,
        concurrency,
        operations: runs.reduce((sum, r) => sum + r.operations, 0),
        opsPerSecond: median(runs.map((r) => r.opsPerSecond)),
        p50Ms: median(runs.map((r) => r.p50Ms)),
        p99Ms: median(runs.map((r) => r.p99Ms)),
        cpuUsPerOp,
      });
    }
  }
  return summaries;
}

/**
 * numerator / denominator of `pick` per repetition, both sides measured in
 * the same repetition at `concurrency`: the ratios and their median.
 */
function sameRunRatio(
  measurements: readonly RecordedMeasurement[],
  definition: RatioDefinition,
  concurrency: number,
  repetitions: number,
  pick: (measurement: Measurement) => number,
): RatioAt {
  const find = (id: string, repetition: number) =>
    measurements.find((m) => m.case === id && m.concurrency === concurrency && m.repetition === repetition);
  const perRepetition: number[] = [];
  for (let repetition = 1; repetition <= repetitions; repetition++) {
    const numerator = find(definition.numerator, repetition);
    const denominator = find(definition.denominator, repetition);
    if (numerator && denominator) perRepetition.push(pick(numerator) / pick(denominator));
  }
  return { concurrency, median: perRepetition.length > 0 ? median(perRepetition) : null, perRepetition };
}

/** Throughput ratios per repetition (both sides from the same repetition), and their median. */
export function ratios(
  measurements: readonly RecordedMeasurement[],
  definitions: readonly RatioDefinition[],
  concurrencies: readonly number[],
  repetitions: number,
): RatioSummary[] {
  return definitions.map((definition) => ({
    ...definition,
    byConcurrency: concurrencies.map((concurrency) =>
      sameRunRatio(measurements, definition, concurrency, repetitions, (m) => m.opsPerSecond),
    ),
  }));
}

/** A goal as measured: its same-run ratio, and whether it held (null when a side was not measured). */
export interface GoalResult extends Goal {
  readonly measured: RatioAt;
  readonly held: boolean | null;
  /**
   * Repetitions whose own ratio met the bound. On a noisy host a median
   * near the bound is decided by the noise, and this shows it in the run.
   */
  readonly heldInRepetitions: number;
}

export function goalResults(
  measurements: readonly RecordedMeasurement[],
  goals: readonly Goal[],
  repetitions: number,
): GoalResult[] {
  return goals.map((goal) => {
    const measured = sameRunRatio(measurements, goal, goal.concurrency, repetitions, (m) =>
      goal.measure === 'throughput' ? m.opsPerSecond : m.p50Ms,
    );
    const meets = (ratio: number) => (goal.measure === 'throughput' ? ratio >= goal.bound : ratio <= goal.bound);
    const held = measured.median === null ? null : meets(measured.median);
    return { ...goal, measured, held, heldInRepetitions: measured.perRepetition.filter(meets).length };
  });
}

const fixed = (value: number, digits: number) => value.toFixed(digits);

/** CPU per operation, servers first, then this process. */
function cpuCell(cpu: Readonly<Record<string, number>>): string {
  const names = [...Object.keys(cpu).filter((name) => name !== BENCH_PROCESS), BENCH_PROCESS];
  return names.map((name) => `${name} ${fixed(cpu[name]!, 0)}`).join(', ');
}

export function casesTable(summaries: readonly CaseSummary[]): string {
  return markdownTable(
    ['case', 'conc', 'ops/s', 'p50 ms', 'p99 ms', 'CPU µs/op'],
    summaries.map((s) => [
      s.title,
      String(s.concurrency),
      fixed(s.opsPerSecond, 0),
      fixed(s.p50Ms, 2),
      fixed(s.p99Ms, 2),
      cpuCell(s.cpuUsPerOp),
    ]),
    [false, true, true, true, true, false],
  );
}

export function ratiosTable(summaries: readonly RatioSummary[], concurrencies: readonly number[]): string {
  return markdownTable(
    ['same-run ratio (throughput)', ...concurrencies.map((c) => `conc ${c}`)],
    summaries.map((r) => [
      r.title,
      ...r.byConcurrency.map((at) => (at.median === null ? '–' : `${fixed(at.median, 2)}×`)),
    ]),
    [false, ...concurrencies.map(() => true)],
  );
}

/** The repetitions' own ratios of a goal, lowest to highest, and how many met its bound. */
function repetitionsCell(r: GoalResult): string {
  const ratios = r.measured.perRepetition;
  if (ratios.length === 0) return '–';
  const range = `${fixed(Math.min(...ratios), 2)}–${fixed(Math.max(...ratios), 2)}×`;
  return `${range}, ${r.heldInRepetitions} of ${ratios.length} held`;
}

/** Each goal with its measured median ratio, whether it held, and how its repetitions spread: the gap, in one run. */
export function goalsTable(results: readonly GoalResult[]): string {
  return markdownTable(
    ['goal (same-run ratio)', 'conc', 'measured', 'goal', 'held?', 'repetitions'],
    results.map((r) => [
      r.title,
      String(r.concurrency),
      r.measured.median === null ? '–' : `${fixed(r.measured.median, 2)}×`,
      `${r.measure === 'throughput' ? '≥' : '≤'} ${fixed(r.bound, 2)}×`,
      r.held === null ? 'not measured' : r.held ? 'held' : 'short',
      repetitionsCell(r),
    ]),
    [false, true, true, true, false, false],
  );
}
