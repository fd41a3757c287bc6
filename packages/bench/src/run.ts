// One bench run: start the targets, open every case, warm each up at every
// concurrency it is measured at until it is steady (warm-up.ts), then
// repetition after repetition measure every case at every concurrency,
// rotating the cases' order each repetition so drift of a shared machine
// falls on all of them alike. A case with a concurrency of its own (sink
// Write across sinks) is measured only at that one, among the cases
// measured there. Everything started is stopped and the run's
// directory removed, whatever happens. The targets and the cases stand
// apart from this loop so that a `--memory` mode (issue 11: the sink's RSS
// from 100k to 1M stored results) can start the same targets and fill the
// sink with the sink-write case's operations.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@fencer/cli-kit';
import {
  CASES,
  RATIOS,
  GOALS,
  SHARDED_CASE,
  shardedRatios,
  shardedWriteCase,
  type BenchCase,
  type OpenCase,
} from './cases.js';
import { FAILOVER_CASE, runFailover, type FailoverReport } from './failover.js';
import { measure } from './measure.js';
import type { Progress } from './progress.js';
import {
  goalResults,
  ratios,
  summarize,
  type CaseSummary,
  type GoalResult,
  type RatioSummary,
  type RecordedMeasurement,
} from './report.js';
import { startTargets } from './targets.js';
import { warmUntilSteady, warmUpText, warmUpWindowSeconds } from './warm-up.js';

/** What `fencer bench` runs with. */
export interface BenchConfig {
  /** Measured time per case, concurrency and repetition. */
  readonly seconds: number;
  readonly repetitions: number;
  /** Closed-loop concurrencies, ascending. */
  readonly concurrency: readonly number[];
  readonly payloadBytes: number;
  /** Ids of the cases to run (CASES order is kept), SHARDED_CASE and FAILOVER_CASE among them or not. */
  readonly cases: readonly string[];
  /** SHARDED_CASE's sink counts, ascending: a case each. */
  readonly sinks: readonly number[];
  /** Kills of the leader in the failover row. */
  readonly failovers: number;
  /** The failover replicas' --leader-ttl-ms. */
  readonly leaderTtlMs: number;
  /** Operations each case runs in its warm-up, across its concurrencies, before it may count as steady. */
  readonly warmUpOperations: number;
  /** Where the run's own temporary directory is made. */
  readonly dataParent: string;
}

/** Everything a run found, as `--json` prints it. */
export interface BenchReport {
  readonly settings: BenchConfig;
  readonly machine: { readonly cpus: number; readonly loadAverage: readonly number[] };
  /** The run's temporary directory (removed by now). */
  readonly data: string;
  /** Pid of each process the run started. */
  readonly processes: Readonly<Record<string, number>>;
  readonly etcd: { readonly version: string } | { readonly skipped: string };
  readonly cases: readonly { readonly id: string; readonly title: string; readonly kind: BenchCase['kind'] }[];
  /** Every concurrency a case was measured at: --concurrency's, and a case's own (SHARDED_CONCURRENCY). */
  readonly concurrencies: readonly number[];
  readonly measurements: readonly RecordedMeasurement[];
  readonly summary: readonly CaseSummary[];
  readonly ratios: readonly RatioSummary[];
  /** Issue 23's goals, each held or short in this run. */
  readonly goals: readonly GoalResult[];
  /** The failover row; null when it was not asked for or there is no etcd. */
  readonly failover: FailoverReport | null;
}

export async function runBench(config: BenchConfig, progress: Progress, signal: AbortSignal): Promise<BenchReport> {
  const data = runDirectory(config.dataParent, 'fencer-bench-');
  const opened: { benchCase: BenchCase; open: OpenCase }[] = [];
  let stopTargets: (() => Promise<void>) | undefined;
  try {
    const started = await startTargets(data, signal);
    stopTargets = started.stop;
    const { targets } = started;
    if (targets.etcdNote) progress.note(targets.etcdNote);
    const cases = [
      ...CASES.filter((c) => config.cases.includes(c.id) && (c.kind !== 'etcd' || targets.etcd)),
      ...(config.cases.includes(SHARDED_CASE) ? config.sinks.map(shardedWriteCase) : []),
    ];
    const concurrenciesOf = (benchCase: BenchCase) =>
      benchCase.concurrency === undefined ? config.concurrency : [benchCase.concurrency];
    const concurrencies = [...new Set(cases.flatMap(concurrenciesOf).concat(config.concurrency))].sort((a, b) => a - b);
    const payload = Buffer.alloc(config.payloadBytes, 'x');
    for (const benchCase of cases) {
      const slots = Math.max(...concurrenciesOf(benchCase));
      opened.push({ benchCase, open: await benchCase.open({ targets, slots, payload, signal }) });
    }

    const failover = config.cases.includes(FAILOVER_CASE) && targets.etcd !== null;
    const measuredSteps = cases.reduce((sum, c) => sum + concurrenciesOf(c).length, 0);
    const steps = (1 + config.repetitions) * measuredSteps + (failover ? config.failovers : 0);
    progress.start(steps);
    const run = async (benchCase: BenchCase, open: OpenCase, concurrency: number, seconds: number) => {
      try {
        return await measure(open, concurrency, seconds, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        throw new Error(`${benchCase.id} at concurrency ${concurrency} failed: ${(error as Error).message}`);
      }
    };
    for (const { benchCase, open } of opened) {
      // Highest first: its many operations a second bring the JIT's hot paths
      // in sooner than concurrency 1 does (an Acquire+Release gained 66 → 109
      // ops/s in five cold windows at 1, then measured 246 after those at 64).
      let ran = 0;
      for (const concurrency of [...concurrenciesOf(benchCase)].reverse()) {
        const label = `warm-up, conc ${concurrency}, ${benchCase.title}`;
        progress.begin(label);
        const window = () => run(benchCase, open, concurrency, warmUpWindowSeconds(config.seconds));
        const windows = await warmUntilSteady(window, { minOperations: config.warmUpOperations, ranBefore: ran });
        ran += windows.reduce((sum, { operations }) => sum + operations, 0);
        progress.end(label, warmUpText(windows, ran));
      }
    }
    const measurements: RecordedMeasurement[] = [];
    for (let repetition = 1; repetition <= config.repetitions; repetition++) {
      for (const concurrency of concurrencies) {
        const there = opened.filter(({ benchCase }) => concurrenciesOf(benchCase).includes(concurrency));
        for (const { benchCase, open } of rotate(there, repetition - 1)) {
          const label = `repetition ${repetition}/${config.repetitions}, conc ${concurrency}, ${benchCase.title}`;
          progress.begin(label);
          const measured = await run(benchCase, open, concurrency, config.seconds);
          progress.end(
            label,
            `${measured.opsPerSecond.toFixed(0)} ops/s, p50 ${measured.p50Ms.toFixed(2)} ms, p99 ${measured.p99Ms.toFixed(2)} ms`,
          );
          measurements.push({ case: benchCase.id, repetition, ...measured });
        }
      }
    }
    // After the closed loops: its kills and elections would disturb them.
    const failoverReport = failover ? await runFailover(targets, config, progress, signal) : null;
    return {
      settings: config,
      machine: { cpus: availableParallelism(), loadAverage: loadavg() },
      data,
      processes: {
        sink: targets.sink.child.pid!,
        coordinator: targets.coordinator.child.pid!,
        echo: targets.echo.child.pid!,
        ...(targets.etcd ? { etcd: targets.etcd.members[0]!.pid } : {}),
        ...(targets.etcdCoordinator ? { 'coordinator-etcd': targets.etcdCoordinator.child.pid! } : {}),
        ...Object.fromEntries(
          opened.flatMap(({ benchCase, open }) =>
            (open.started ?? []).map(({ name, pid }) => [`${benchCase.id} ${name}`, pid]),
          ),
        ),
      },
      etcd: targets.etcd ? { version: targets.etcd.version } : { skipped: targets.etcdNote! },
      cases: cases.map(({ id, title, kind }) => ({ id, title, kind })),
      concurrencies,
      measurements,
      summary: summarize(measurements, cases, concurrencies),
      ratios: ratios(measurements, [...RATIOS, ...shardedRatios(config.sinks)], concurrencies, config.repetitions),
      goals: goalResults(measurements, GOALS, config.repetitions),
      failover: failoverReport,
    };
  } finally {
    progress.stop();
    // Closing a client cannot fail the run: the report is made, and what
    // must not be left behind is the processes and the directory below.
    for (const { open } of opened) await open.close().catch(() => undefined);
    await stopTargets?.();
    rmSync(data, { recursive: true, force: true });
  }
}

/** A new directory of the run's own under `parent`; ConfigError (one line) when it cannot be made. */
export function runDirectory(parent: string, prefix: string): string {
  try {
    return mkdtempSync(join(parent, prefix));
  } catch (error) {
    throw new ConfigError(
      `cannot make the run's directory in ${parent}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/** `items` starting at index `by` (mod length), wrapping around. */
function rotate<T>(items: readonly T[], by: number): T[] {
  const start = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}
