// `fencer bench` (what `npm run bench` runs): the project's Write,
// Acquire+Release and Renew against real processes, next to the raw limits
// and etcd, in one interleaved run; tables on stdout, or JSON with --json;
// progress on stderr. Instead of that run, one of three single-question
// modes: --memory, --proxy-overhead, --coordinator-memory. It exits 0 when every measurement ran, 1 with one
// line when a flag is wrong or something failed; what it started is
// stopped on Ctrl-C, SIGTERM and when its own supervisor goes away.
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, configuredCommand, nonNegativeInteger, positiveInteger, whenParentGone } from '@fencer/cli-kit';
import { CASES, SHARDED_CASE, SHARDED_CONCURRENCY } from './cases.js';
import { FAILOVER_CASE, failoverTable } from './failover.js';
import { progressOn } from './progress.js';
import { casesTable, goalsTable, ratiosTable } from './report.js';
import { coordinatorMemoryText, runCoordinatorMemory } from './coordinator-memory.js';
import { memoryText, runMemory, type MemoryConfig } from './memory.js';
import { proxyOverheadText, runProxyOverhead } from './proxy-overhead.js';
import { runBench, type BenchConfig, type BenchReport } from './run.js';
import { WARM_UP_OPERATIONS } from './warm-up.js';

/** Every id --cases takes: the closed-loop cases, sink Write across sinks (a case per --sinks count), then the failover row. */
const CASE_IDS: readonly string[] = [...CASES.map((c) => c.id), SHARDED_CASE, FAILOVER_CASE];

/** The coordinator's default --leader-ttl-ms (H2), which the failover row runs at unless told. */
const DEFAULT_LEADER_TTL_MS = 5_000;
/** The coordinator's floor for --leader-ttl-ms (etcd leases are whole seconds): refused here before a run, not after it. */
const MIN_LEADER_TTL_MS = 1_000;

function leaderTtl(value: string): number {
  const ms = positiveInteger(value);
  if (ms < MIN_LEADER_TTL_MS)
    throw new InvalidArgumentError(`at least ${MIN_LEADER_TTL_MS} (etcd leases are whole seconds)`);
  return ms;
}

/** The largest payload a Write takes (V2). */
const MAX_PAYLOAD_BYTES = 1_048_576;

function positiveSeconds(value: string): number {
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new InvalidArgumentError('expected a positive number of seconds, e.g. 0.5 or 5');
  }
  return seconds;
}

/** A parser of positive integers separated by commas, at most `max`, into a sorted list without repeats. */
function integerList(example: string, max = Infinity) {
  return (value: string): number[] => {
    const numbers = value.split(',').map((part) => {
      if (!/^\s*\d+\s*$/.test(part) || Number(part) < 1) {
        throw new InvalidArgumentError(`expected positive integers separated by commas, e.g. ${example}`);
      }
      if (Number(part) > max) throw new InvalidArgumentError(`at most ${max}`);
      return Number(part);
    });
    return [...new Set(numbers)].sort((a, b) => a - b);
  };
}

/** The most sinks --sinks starts for one case: each still takes SHARDED_CONCURRENCY / 16 = 4 of the writes in flight. */
const MAX_SINKS = 16;

function caseList(value: string): string[] {
  const ids = value.split(',').map((id) => id.trim());
  const unknown = ids.filter((id) => !CASE_IDS.includes(id));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`unknown case ${unknown.join(', ')}; cases: ${CASE_IDS.join(', ')}`);
  }
  return ids;
}

function payloadBytes(value: string): number {
  const bytes = positiveInteger(value);
  if (bytes > MAX_PAYLOAD_BYTES) throw new InvalidArgumentError(`at most ${MAX_PAYLOAD_BYTES} bytes (V2)`);
  return bytes;
}

interface BenchFlags {
  seconds: number;
  repetitions: number;
  warmUpOperations: number;
  concurrency: number[];
  payloadBytes: number;
  cases?: string[];
  sinks: number[];
  failovers: number;
  leaderTtlMs: number;
  data?: string;
  json?: boolean;
  memory?: boolean;
  memoryResults: number;
  proxyOverhead?: boolean;
  coordinatorMemory?: boolean;
}

/** The modes that replace the interleaved run, by commander's attribute names: at most one is given. */
const MODES = ['memory', 'proxyOverhead', 'coordinatorMemory'];
const otherModes = (mode: string) => MODES.filter((other) => other !== mode);

/** `fencer bench`. */
export function benchCommand(): Command {
  return configuredCommand(
    new Command('bench').description(
      'measure Write, Acquire+Release and Renew against real processes, beside raw gRPC, LevelDB, fdatasync and etcd',
    ),
    [
      new Option('--seconds <s>', 'measured time per case, concurrency and repetition')
        .default(5)
        .argParser(positiveSeconds),
      new Option('--repetitions <n>', 'interleaved repetitions; tables show medians')
        .default(3)
        .argParser(positiveInteger),
      new Option(
        '--warm-up-operations <n>',
        'operations each case runs, across its concurrencies, before its warm-up may end (V8 optimizes by calls, not seconds)',
      )
        .default(WARM_UP_OPERATIONS)
        .argParser(nonNegativeInteger),
      new Option('--concurrency <list>', 'closed-loop concurrencies, comma-separated')
        .default([1, 16, 64], '1,16,64')
        .argParser(integerList('1,16,64')),
      new Option('--payload-bytes <n>', 'bytes per Write, echo, put and txn').default(100).argParser(payloadBytes),
      new Option('--cases <list>', `cases to run, comma-separated (default: all): ${CASE_IDS.join(', ')}`).argParser(
        caseList,
      ),
      new Option(
        '--sinks <list>',
        `${SHARDED_CASE}: sink counts, comma-separated; for each, that many sinks and a coordinator fronting them, Writes at conc ${SHARDED_CONCURRENCY} across them`,
      )
        .default([1, 2], '1,2')
        .argParser(integerList('1,2,4', MAX_SINKS)),
      new Option('--failovers <n>', "the failover row: leader kills, each timed to the new leader's first grant")
        .default(10)
        .argParser(positiveInteger),
      new Option('--leader-ttl-ms <n>', "the failover row's replicas' --leader-ttl-ms (their election session's TTL)")
        .default(DEFAULT_LEADER_TTL_MS)
        .argParser(leaderTtl),
      new Option('--data <dir>', "where the run's temporary directory goes (default: the system's)"),
      new Option('--json', 'print the whole report as JSON instead of tables'),
      new Option(
        '--memory',
        "instead: store --memory-results results in a real sink through WriteStream, and show the sink's RSS after each tenth",
      ).conflicts(otherModes('memory')),
      new Option('--memory-results <n>', 'results --memory stores').default(1_000_000).argParser(positiveInteger),
      new Option(
        '--proxy-overhead',
        'instead: unary GetFence against a real sink, direct and through an idle in-process fault proxy (issue 7)',
      ).conflicts(otherModes('proxyOverhead')),
      new Option(
        '--coordinator-memory',
        "instead: a coordinator's RSS, heap and resource entries after 50,000 Acquire+Release pairs, per --max-idle-resources bound (V4)",
      ).conflicts(otherModes('coordinatorMemory')),
    ],
    (flags: BenchFlags) => {
      const dataParent = flags.data === undefined ? tmpdir() : resolve(flags.data);
      return {
        config: Object.freeze({
          seconds: flags.seconds,
          repetitions: flags.repetitions,
          warmUpOperations: flags.warmUpOperations,
          concurrency: flags.concurrency,
          payloadBytes: flags.payloadBytes,
          cases: flags.cases ?? CASE_IDS,
          sinks: flags.sinks,
          failovers: flags.failovers,
          leaderTtlMs: flags.leaderTtlMs,
          dataParent,
        }) satisfies BenchConfig,
        memory: flags.memory
          ? (Object.freeze({
              results: flags.memoryResults,
              payloadBytes: flags.payloadBytes,
              dataParent,
            }) satisfies MemoryConfig)
          : null,
        proxyOverhead: flags.proxyOverhead === true,
        coordinatorMemory: flags.coordinatorMemory === true,
        json: flags.json === true,
      };
    },
    async ({ config, memory, proxyOverhead, coordinatorMemory, json }) => {
      const stopping = new AbortController();
      const stop = (code: number) => () => {
        process.exitCode = code;
        stopping.abort(new Error('stopped'));
      };
      process.once('SIGINT', stop(130));
      process.once('SIGTERM', stop(143));
      whenParentGone(stop(1));
      const progress = progressOn(process.stderr);
      const { dataParent } = config;
      let output: string;
      try {
        if (memory) {
          const report = await runMemory(memory, progress, stopping.signal);
          output = json ? JSON.stringify(report, null, 2) + '\n' : memoryText(report);
        } else if (proxyOverhead) {
          const report = await runProxyOverhead({ dataParent }, progress, stopping.signal);
          output = json ? JSON.stringify(report, null, 2) + '\n' : proxyOverheadText(report);
        } else if (coordinatorMemory) {
          const report = await runCoordinatorMemory({ dataParent }, progress, stopping.signal);
          output = json ? JSON.stringify(report, null, 2) + '\n' : coordinatorMemoryText(report);
        } else {
          const report = await runBench(config, progress, stopping.signal);
          output = json ? JSON.stringify(report, null, 2) + '\n' : text(report);
        }
      } catch (error) {
        if (error instanceof ConfigError) throw error; // configuredCommand's one `error:` line
        if (!stopping.signal.aborted) {
          process.stderr.write(`fencer bench: ${(error as Error).message}\n`);
          process.exitCode = 1;
        }
        // Nothing is left running; the supervisor-gone watch must not keep the process alive.
        process.stdin.destroy();
        return;
      }
      process.stdin.destroy();
      process.stdout.write(output);
    },
  );
}

/** The tables, with what they were measured under. */
function text(report: BenchReport): string {
  const { settings } = report;
  const concurrencies = settings.concurrency;
  const lines = [
    `fencer bench: ${settings.seconds} s per case, ${settings.repetitions} interleaved repetition(s) ` +
      `after warm-ups of at least ${settings.warmUpOperations} operations a case, ` +
      `concurrency ${concurrencies.join(', ')}, ${settings.payloadBytes}-byte payloads, closed loop; ` +
      `${report.machine.cpus} CPUs, load average ${report.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')} at the end`,
    '',
    casesTable(report.summary),
    '',
    ratiosTable(report.ratios, report.concurrencies),
    '',
    goalsTable(report.goals),
    '',
    ...(report.failover ? [failoverTable(report.failover), ''] : []),
    'Medians over repetitions; a ratio is of throughputs measured in the same repetition, then the median of those.',
    'CPU µs/op: user+system time of each server process per operation, and of this process (`bench`: the client side, and the whole of the in-process raw limits).',
    ...(report.settings.cases.includes(SHARDED_CASE)
      ? [
          `sink Write across N sinks: N sinks and a coordinator fronting them (P1), of the row's own; ${SHARDED_CONCURRENCY} writes in flight, ` +
            "spread evenly over the sinks, each to the sink its lease names (P3). A sink's CPU is per write it took: " +
            'flat as N grows when the sinks share nothing, so throughput scales with the cores there are.',
        ]
      : []),
    'version' in report.etcd
      ? `etcd ${report.etcd.version} on loopback, one member, no auth; fencer sink and coordinator with bearer-token auth; ` +
        '"--store etcd": a second coordinator on the same sink, its state in that etcd (H1).' +
        (report.failover
          ? ' Failover: two more such replicas (H2); the client is given both addresses and follows NOT_LEADER (H7).'
          : '')
      : `etcd: ${(report.etcd as { skipped: string }).skipped}.`,
  ];
  return lines.join('\n') + '\n';
}
