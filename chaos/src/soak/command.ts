// `fencer chaos`: a seeded soak with live progress, a verdict, and the
// seed to replay it. Exit 0 when S1–S6 and the lock model held, 1 on any
// violation.
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, configuredCommand, positiveInteger } from '@fencer/cli-kit';
import { writeHistory } from '../history-export/json-lines.js';
import { OPPORTUNITY_MEANINGS, opportunities, type Opportunities } from '../checker/opportunities.js';
import { libfaketime } from '../nemesis/clock.js';
import { writeReport } from '../report/html.js';
import { WORKLOAD_MIXES, type WorkloadMix } from '../workload/workload.js';
import { runSoak, type SoakProgress, type SoakResult } from './soak.js';

/** What `fencer chaos` runs with. */
export interface ChaosConfig {
  readonly seconds: number;
  readonly seed: number;
  readonly workers: number;
  readonly resources: number;
  readonly mix: WorkloadMix;
  /** Coordinator replicas on etcd (H) in place of the one coordinator, with the replica faults drawn too; absent: one coordinator. */
  readonly replicas?: number;
  /** Sinks sharded by resource (P1), each a target of the faults; absent: one sink. */
  readonly sinks?: number;
  /** Keep the run's data here; absent: a temporary directory, removed afterwards. */
  readonly data?: string;
  readonly toxiproxyUrl?: string;
  /** Write the run's timeline here as one self-contained HTML file. */
  readonly report?: string;
  /** Write the run's history here as JSON lines in Jepsen's shape (historyLines). */
  readonly history?: string;
}

/** `fencer chaos`. */
export function chaosCommand(): Command {
  return configuredCommand(
    new Command('chaos')
      .description(
        'a seeded soak: workers under a random schedule of faults, then the S1–S6 and lock-model check of the history',
      )
      .addHelpText(
        'after',
        '\nExit status: 0 safe; 1 a violation found, or the run could not finish; 2 unknown: nothing found, but the lock model could not judge all of the history (too many overlapping lease calls).',
      ),
    [
      new Option('--seconds <n>', 'how long the faults go on').default(60).argParser(positiveInteger),
      new Option('--seed <n>', 'the schedule’s seed (default: random; printed, to replay a run)').argParser(seedOf),
      new Option('--workers <n>', 'worker processes (at most 26)').default(4).argParser(positiveInteger),
      new Option('--resources <n>', 'resources they share').default(2).argParser(positiveInteger),
      new Option(
        '--mix <name>',
        'what the workers do: a seeded generator’s mix of calls (`fencer worker --mix`), or loop (acquire, write steps, release)',
      )
        .choices(WORKLOAD_MIXES)
        .default('default'),
      new Option(
        '--replicas <n>',
        'coordinator replicas on a 3-member etcd (from the etcd on PATH) instead of one coordinator, and their faults: the leader killed or paused, a replica cut from etcd, etcd members killed',
      ).argParser(positiveInteger),
      new Option(
        '--sinks <n>',
        'sinks sharded by resource (P1): each crashed, paused, isolated and cut on its own, and the final state read on each resource’s owner',
      ).argParser(positiveInteger),
      new Option('--data <dir>', 'keep the run’s data (logs, LevelDB) here'),
      new Option('--toxiproxy <url>', 'inject faults through this running Toxiproxy').env('TOXIPROXY_URL'),
      new Option('--report <file.html>', 'write the run as a self-contained HTML timeline'),
      new Option(
        '--history <file.jsonl>',
        'write the run’s history as JSON lines, one event per line (Jepsen’s shape)',
      ),
    ],
    (options: {
      seconds: number;
      seed?: number;
      workers: number;
      resources: number;
      mix: WorkloadMix;
      replicas?: number;
      sinks?: number;
      data?: string;
      toxiproxy?: string;
      report?: string;
      history?: string;
    }): ChaosConfig => {
      if (options.workers > 26) throw new ConfigError('--workers must be at most 26');
      // One replica has no standby to fail over to: the replica faults would only stop it.
      if (options.replicas !== undefined && options.replicas < 2)
        throw new ConfigError('--replicas must be at least 2');
      return Object.freeze({
        seconds: options.seconds,
        seed: options.seed ?? Math.floor(Math.random() * 2 ** 31),
        workers: options.workers,
        resources: options.resources,
        mix: options.mix,
        ...(options.replicas === undefined ? {} : { replicas: options.replicas }),
        ...(options.sinks === undefined ? {} : { sinks: options.sinks }),
        ...(options.data === undefined ? {} : { data: resolve(options.data) }),
        ...(options.toxiproxy === undefined ? {} : { toxiproxyUrl: options.toxiproxy }),
        ...(options.report === undefined ? {} : { report: resolve(options.report) }),
        ...(options.history === undefined ? {} : { history: resolve(options.history) }),
      });
    },
    runChaos,
  );
}

/** Whether libfaketime is installed, which the clock-skew nemesis needs. */
function hasLibfaketime(): boolean {
  try {
    libfaketime();
    return true;
  } catch {
    return false;
  }
}

function seedOf(value: string): number {
  if (!/^\d{1,10}$/.test(value) || Number(value) >= 2 ** 32) {
    throw new InvalidArgumentError('expected an integer from 0 to 4294967295');
  }
  return Number(value);
}

async function runChaos(config: ChaosConfig): Promise<void> {
  const data = config.data ?? mkdtempSync(join(tmpdir(), 'fencer-chaos-'));
  const stopping = new AbortController();
  // Every planned fault waits on this one signal from the start of the run.
  setMaxListeners(0, stopping.signal);
  process.once('SIGINT', () => stopping.abort(new Error('interrupted')));
  process.once('SIGTERM', () => stopping.abort(new Error('terminated')));
  const replay = `fencer chaos --seed ${config.seed} --seconds ${config.seconds} --workers ${config.workers} --resources ${config.resources} --mix ${config.mix}${
    config.replicas === undefined ? '' : ` --replicas ${config.replicas}`
  }${config.sinks === undefined ? '' : ` --sinks ${config.sinks}`}`;
  process.stdout.write(
    `fencer chaos: seed ${config.seed}, ${config.seconds} s, ${config.workers} workers on ${config.resources} resources, mix ${config.mix}${
      config.replicas === undefined ? '' : `, ${config.replicas} coordinator replicas on etcd`
    }${config.sinks === undefined ? '' : `, ${config.sinks} sinks sharded by resource`}\n`,
  );
  // Clock skew needs libfaketime; a machine without it soaks every other fault.
  const clockSkew = hasLibfaketime();
  if (!clockSkew) {
    process.stdout.write('clock-skew left out: libfaketime is not installed (Debian: apt-get install faketime)\n');
  }
  let result: SoakResult;
  try {
    result = await runSoak({
      ...config,
      clockSkew,
      data,
      signal: stopping.signal,
      onProgress: progressBar(),
    });
  } catch (error) {
    process.stderr.write(`\nfencer chaos: ${(error as Error).message}; replay with: ${replay}\n`);
    process.exitCode = 1;
    return;
  } finally {
    if (config.data === undefined) rmSync(data, { recursive: true, force: true });
  }
  process.stderr.write('\n');
  const { history, violations, unchecked } = result;
  const byKind = new Map<string, number>();
  for (const fault of history.faults) byKind.set(fault.name, (byKind.get(fault.name) ?? 0) + 1);
  const acked = history.operations.filter((op) => op.method === 'Write' && op.outcome.type === 'ok').length;
  process.stdout.write(
    `${history.operations.length} operations (${acked} acknowledged writes), ${history.faults.length} faults (${[
      ...byKind,
    ]
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ')})\n`,
  );
  process.stdout.write(
    `clock uncertainty assumed: ${result.clockUncertaintyMs.toFixed(3)} ms between any two processes (measured by round trips to each worker, at least 1 ms)\n`,
  );
  if (result.coordinatorClock) {
    const { maxRate, aheadMs } = result.coordinatorClock;
    process.stdout.write(
      `coordinator clock assumed: at most x${maxRate} the real rate plus ${Math.ceil(aheadMs)} ms over any TTL (clock skew; L2 judged on that)\n`,
    );
  }
  process.stdout.write(
    opportunityLines(opportunities(history.operations, { clockUncertaintyMs: result.clockUncertaintyMs })),
  );
  if (config.report) {
    await writeReport(config.report, {
      history,
      violations,
      unchecked,
      title: `fencer chaos, seed ${config.seed}`,
      seed: config.seed,
      clockUncertaintyMs: result.clockUncertaintyMs,
      meta: {
        seconds: String(config.seconds),
        workers: String(config.workers),
        resources: String(config.resources),
        replay,
      },
    });
    process.stdout.write(`report: ${config.report}\n`);
  }
  if (config.history) {
    await writeHistory(config.history, history);
    process.stdout.write(`history: ${config.history}\n`);
  }
  const { lines, exitCode } = verdictOf(result, replay);
  process.stdout.write(lines);
  process.exitCode = exitCode;
}

/**
 * The findings and the verdict line, and the exit status: 0 safe, 1 a
 * violation, 2 unknown (Jepsen's: nothing found, but not everything judged).
 */
export function verdictOf(
  { violations, unchecked }: Pick<SoakResult, 'violations' | 'unchecked'>,
  replay: string,
): { lines: string; exitCode: 0 | 1 | 2 } {
  const findings = [...violations, ...unchecked].map((v) => `  ${v.rule}: ${v.message}\n`).join('');
  if (violations.length > 0) {
    return { lines: `${findings}verdict: ${violations.length} violation(s); replay with: ${replay}\n`, exitCode: 1 };
  }
  if (unchecked.length > 0) {
    return {
      lines: `${findings}verdict: unknown: no violation found, but the lock model could not judge ${unchecked.length} resource(s) past the point named; replay with: ${replay}\n`,
      exitCode: 2,
    };
  }
  return { lines: 'verdict: S1–S6 and the lock model held\n', exitCode: 0 };
}

/**
 * How many operations could have broken each invariant, so a reader sees
 * what a clean verdict rests on; a rule with none is called out.
 */
function opportunityLines(counts: Opportunities): string {
  const rules = Object.keys(counts) as (keyof Opportunities)[];
  const width = Math.max(...rules.map((rule) => String(counts[rule]).length));
  const lines = rules.map((rule) => `  ${rule} ${String(counts[rule]).padStart(width)}  ${OPPORTUNITY_MEANINGS[rule]}`);
  const untried = rules.filter((rule) => counts[rule] === 0);
  return [
    'opportunities to break each invariant:',
    ...lines,
    ...(untried.length > 0
      ? [
          `  (no chance to break ${untried.join(', ')}: a clean verdict says nothing about ${untried.length > 1 ? 'them' : 'it'})`,
        ]
      : []),
  ]
    .map((line) => `${line}\n`)
    .join('');
}

/** Redraws one line on a terminal; elsewhere (CI logs) prints a line every 5 s. */
function progressBar(): (progress: SoakProgress) => void {
  const tty = process.stderr.isTTY;
  let lastLineAt = -Infinity;
  return (p) => {
    const width = 30;
    const done = Math.round((p.elapsedMs / p.totalMs) * width);
    const line = `[${'#'.repeat(done)}${'.'.repeat(width - done)}] ${Math.round(p.elapsedMs / 1000)}/${Math.round(
      p.totalMs / 1000,
    )} s  operations ${p.operations}  faults ${p.faults}  violations ${p.violations}`;
    if (tty) process.stderr.write(`\r${line}`);
    else if (p.elapsedMs - lastLineAt >= 5_000) {
      lastLineAt = p.elapsedMs;
      process.stderr.write(`${line}\n`);
    }
  };
}
