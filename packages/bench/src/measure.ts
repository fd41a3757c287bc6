// One measurement: a case's first `concurrency` slots in a closed loop for a
// given time (each slot sends its next operation when the last one
// answered), with every latency in an HDR histogram and the CPU time each
// server process and this one spent, read before and after. A server that
// takes only some of a case's operations (one sink of several) is charged
// per operation it took, so its figure is comparable with a lone server's.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as hdr from 'hdr-histogram-js';
import type { MeasuredProcess, OpenCase } from './cases.js';

/** What one case did at one concurrency for one stretch of time. */
export interface Measurement {
  readonly concurrency: number;
  readonly operations: number;
  /** From the first operation sent to the last one answered. */
  readonly seconds: number;
  readonly opsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /**
   * CPU time (user + system) per operation in microseconds, by server
   * process name, and `bench` for this process; a server that counts the
   * operations it took (MeasuredProcess.served) per operation it took.
   */
  readonly cpuUsPerOp: Readonly<Record<string, number>>;
}

/** The name of this process's own CPU in cpuUsPerOp: the client side, and the whole of an in-process raw limit. */
export const BENCH_PROCESS = 'bench';

/** Latencies in an HDR histogram: integer microseconds, 1 µs to an hour, 3 significant digits. */
export class LatencyHistogram {
  readonly #histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });

  /** Records one latency in milliseconds (under a microsecond counts as one). */
  record(ms: number): void {
    this.#histogram.recordValue(Math.max(1, Math.round(ms * 1_000)));
  }

  /** The latency at `percentile` (0..100) of those recorded, in milliseconds. */
  percentileMs(percentile: number): number {
    return this.#histogram.getValueAtPercentile(percentile) / 1_000;
  }
}

/** Past its time by this much, a measurement is stuck: the run fails rather than hangs. */
const STUCK_AFTER_MS = 30_000;

let ticksPerSecond: number | undefined;

/** CPU time of a process so far, in microseconds, from /proc/<pid>/stat (utime + stime). */
export function processCpuUs(pid: number): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: state is [0], utime [11], stime [12].
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1e6;
}

/** CPU time so far, and operations taken so far where a server counts them, by process name. */
export interface Reading {
  readonly cpuUs: Readonly<Record<string, number>>;
  readonly served: Readonly<Record<string, number>>;
}

function readNow(servers: readonly MeasuredProcess[]): Reading {
  const usage = process.cpuUsage();
  const cpuUs: Record<string, number> = { [BENCH_PROCESS]: usage.user + usage.system };
  const served: Record<string, number> = {};
  for (const { name, pid, served: count } of servers) {
    cpuUs[name] = processCpuUs(pid);
    if (count) served[name] = count();
  }
  return { cpuUs, served };
}

/** CPU µs per operation of each process between two readings: per operation it took where it counts them, else per one of all `operations`. */
export function cpuPerOperation(before: Reading, after: Reading, operations: number): Record<string, number> {
  const perOperation: Record<string, number> = {};
  for (const name of Object.keys(before.cpuUs)) {
    const taken = name in before.served ? after.served[name]! - before.served[name]! : operations;
    perOperation[name] = taken > 0 ? (after.cpuUs[name]! - before.cpuUs[name]!) / taken : 0;
  }
  return perOperation;
}

/**
 * Runs the first `concurrency` operations of `open` in a closed loop for
 * `seconds`; no operation starts after that, and those under way finish.
 * Rejects with the first operation's failure (the others are let finish),
 * or when `signal` is aborted.
 */
export async function measure(
  open: OpenCase,
  concurrency: number,
  seconds: number,
  signal: AbortSignal,
): Promise<Measurement> {
  const operations = open.operations.slice(0, concurrency);
  if (operations.length < concurrency)
    throw new Error(`the case has ${open.operations.length} slots, not ${concurrency}`);
  const histogram = new LatencyHistogram();
  let failure: Error | undefined;
  let count = 0;
  const before = readNow(open.servers);
  const startedMs = performance.now();
  const endMs = startedMs + seconds * 1_000;
  const loop = async (operation: () => Promise<void>) => {
    while (failure === undefined && !signal.aborted && performance.now() < endMs) {
      const sentMs = performance.now();
      try {
        await operation();
      } catch (error) {
        failure ??= error instanceof Error ? error : new Error(String(error));
        return;
      }
      histogram.record(performance.now() - sentMs);
      count += 1;
    }
  };
  let watchdog: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    watchdog = setTimeout(
      () => reject(new Error(`operations were still under way ${STUCK_AFTER_MS} ms after the measurement's end`)),
      seconds * 1_000 + STUCK_AFTER_MS,
    );
  });
  try {
    await Promise.race([Promise.all(operations.map(loop)), stuck]);
  } finally {
    clearTimeout(watchdog);
  }
  const elapsedMs = performance.now() - startedMs;
  const after = readNow(open.servers);
  signal.throwIfAborted();
  if (failure !== undefined) throw failure;
  return {
    concurrency,
    operations: count,
    seconds: elapsedMs / 1_000,
    opsPerSecond: count / (elapsedMs / 1_000),
    p50Ms: histogram.percentileMs(50),
    p99Ms: histogram.percentileMs(99),
    cpuUsPerOp: cpuPerOperation(before, after, count),
  };
}
