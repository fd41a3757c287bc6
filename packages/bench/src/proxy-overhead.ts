// `fencer bench --proxy-overhead`: what the fault proxy costs a gRPC call
// when it injects nothing (issue 7). Unary GetFence against a real sink
// process, direct and through an in-process `startToxiproxy` proxy with no
// toxics, on loopback; latencies in an HDR histogram, as every bench
// measurement.
//
// Repetitions interleave the two paths (alternating which goes first), so
// drift of the machine hits both; the ratios compare runs of the same
// repetition. Bounded: a fixed number of calls, each with a deadline, and
// each phase with a time limit.
import { rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import * as grpc from '@grpc/grpc-js';
import { fencing, unaryCall, type GetFenceResponse__Output, type SinkClient } from '@fencer/proto';
import { fencerBin, spawnReady, stopChild, type ReadyChild } from '@fencer/supervisor';
import { startToxiproxy, type RunningToxiproxy } from '@fencer/toxiproxy';
import { LatencyHistogram } from './measure.js';
import type { Progress } from './progress.js';
import { markdownTable } from '@fencer/common';
import { median } from './report.js';
import { runDirectory } from './run.js';

/** What `fencer bench --proxy-overhead` runs with. */
export interface ProxyOverheadConfig {
  /** Where the run's own temporary directory (the sink's data) is made. */
  readonly dataParent: string;
}

const REPETITIONS = 3;
const WARM_UP_CALLS = 300;
/** Calls one after another, for the latency percentiles. */
const SERIAL_CALLS = 2_000;
/** Calls kept in flight at once in the throughput phase. */
const CONCURRENCY = 64;
/** Calls in the throughput phase, across all CONCURRENCY workers. */
const CONCURRENT_CALLS = 10_000;
const CALL_DEADLINE_MS = 5_000;
/** A phase taking longer than this ends the run with an error rather than hanging. */
const PHASE_LIMIT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const RESOURCE = 'bench';

/** The goals issue 7 sets for an idle proxy. */
const GOAL_P50_OVERHEAD_MS = 0.2;
const GOAL_THROUGHPUT_RATIO = 0.8;

type Path = 'direct' | 'proxied';

/** One measured run of one path: latency percentiles at concurrency 1 (ms) and calls per second at CONCURRENCY. */
export interface ProxyOverheadRun {
  readonly repetition: number;
  readonly path: Path;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly callsPerSecond: number;
}

/** A same-repetition comparison of the two paths: each repetition's figure, their median, and the goal. */
export interface ProxyOverheadFigure {
  readonly perRepetition: readonly number[];
  readonly median: number;
  readonly goal: number;
  readonly met: boolean;
}

export interface ProxyOverheadReport {
  readonly machine: { readonly cpus: number; readonly loadAverage: readonly number[] };
  /** By repetition, then path. */
  readonly runs: readonly ProxyOverheadRun[];
  /** Proxied p50 minus direct p50 at concurrency 1, in ms: at most the goal. */
  readonly p50OverheadMs: ProxyOverheadFigure;
  /** Proxied over direct calls per second at CONCURRENCY: at least the goal. */
  readonly throughputRatio: ProxyOverheadFigure;
}

function getFence(client: SinkClient): Promise<GetFenceResponse__Output> {
  return unaryCall<{ resource: string }, GetFenceResponse__Output>(
    client,
    client.GetFence,
    { resource: RESOURCE },
    { timeoutMs: CALL_DEADLINE_MS },
  );
}

function checkPhase(startedMs: number, what: string, signal: AbortSignal): void {
  signal.throwIfAborted();
  if (performance.now() - startedMs > PHASE_LIMIT_MS) throw new Error(`${what} took over ${PHASE_LIMIT_MS} ms`);
}

async function serialLatencies(client: SinkClient, what: string, signal: AbortSignal): Promise<LatencyHistogram> {
  const startedMs = performance.now();
  const histogram = new LatencyHistogram();
  for (let i = 0; i < SERIAL_CALLS; i++) {
    const callStartedMs = performance.now();
    await getFence(client);
    histogram.record(performance.now() - callStartedMs);
    if (i % 500 === 0) checkPhase(startedMs, what, signal);
  }
  return histogram;
}

async function concurrentThroughput(client: SinkClient, what: string, signal: AbortSignal): Promise<number> {
  const startedMs = performance.now();
  let issued = 0;
  const worker = async () => {
    while (issued < CONCURRENT_CALLS) {
      issued += 1;
      await getFence(client);
      if (issued % 1_000 === 0) checkPhase(startedMs, what, signal);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return CONCURRENT_CALLS / ((performance.now() - startedMs) / 1_000);
}

async function measurePath(
  client: SinkClient,
  repetition: number,
  path: Path,
  progress: Progress,
  signal: AbortSignal,
): Promise<ProxyOverheadRun> {
  const what = `repetition ${repetition}/${REPETITIONS}, ${path}`;
  progress.begin(what);
  const latencies = await serialLatencies(client, what, signal);
  const callsPerSecond = await concurrentThroughput(client, what, signal);
  const run = {
    repetition,
    path,
    p50Ms: latencies.percentileMs(50),
    p99Ms: latencies.percentileMs(99),
    callsPerSecond,
  };
  progress.end(
    what,
    `p50 ${run.p50Ms.toFixed(3)} ms, p99 ${run.p99Ms.toFixed(3)} ms (conc 1), ` +
      `${callsPerSecond.toFixed(0)} calls/s (conc ${CONCURRENCY})`,
  );
  return run;
}

/** Creates a proxy with no toxics through the HTTP API, as any Toxiproxy client would; resolves with its address. */
async function createProxy(apiAddress: string, upstream: string): Promise<string> {
  const response = await fetch(`http://${apiAddress}/proxies`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'sink', listen: '127.0.0.1:0', upstream }),
  });
  if (response.status !== 201) {
    throw new Error(`creating the proxy answered ${response.status}: ${await response.text()}`);
  }
  return ((await response.json()) as { listen: string }).listen;
}

/** Each repetition's `of(proxied, direct)`, their median, and whether it meets `goal` (`atMost` or at least). */
function figure(
  runs: readonly ProxyOverheadRun[],
  of: (proxied: ProxyOverheadRun, direct: ProxyOverheadRun) => number,
  goal: number,
  atMost: boolean,
): ProxyOverheadFigure {
  const perRepetition: number[] = [];
  for (let repetition = 1; repetition <= REPETITIONS; repetition++) {
    const direct = runs.find((run) => run.repetition === repetition && run.path === 'direct');
    const proxied = runs.find((run) => run.repetition === repetition && run.path === 'proxied');
    if (direct && proxied) perRepetition.push(of(proxied, direct));
  }
  const value = median(perRepetition);
  return { perRepetition, median: value, goal, met: atMost ? value <= goal : value >= goal };
}

export async function runProxyOverhead(
  config: ProxyOverheadConfig,
  progress: Progress,
  signal: AbortSignal,
): Promise<ProxyOverheadReport> {
  const data = runDirectory(config.dataParent, 'fencer-proxy-overhead-');
  const clients: grpc.Client[] = [];
  let sink: ReadyChild | undefined;
  let toxiproxy: RunningToxiproxy | undefined;
  try {
    progress.note('starting a sink process and an in-process fault proxy');
    sink = await spawnReady(fencerBin(), ['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', data]);
    toxiproxy = await startToxiproxy({ listen: '127.0.0.1:0' });
    const proxyListen = await createProxy(toxiproxy.address, sink.ready.address);
    const direct = new fencing.Sink(sink.ready.address, grpc.credentials.createInsecure());
    const proxied = new fencing.Sink(proxyListen, grpc.credentials.createInsecure());
    clients.push(direct, proxied);
    const byPath: Record<Path, SinkClient> = { direct, proxied };
    progress.note(`sink ${sink.ready.address}, proxy ${proxyListen}; warming up both paths`);
    for (const client of [direct, proxied]) for (let i = 0; i < WARM_UP_CALLS; i++) await getFence(client);

    progress.start(2 * REPETITIONS);
    const runs: ProxyOverheadRun[] = [];
    for (let repetition = 1; repetition <= REPETITIONS; repetition++) {
      // Alternate which path goes first, so neither always runs on a warmer or cooler machine.
      const order: Path[] = repetition % 2 === 1 ? ['direct', 'proxied'] : ['proxied', 'direct'];
      for (const path of order) runs.push(await measurePath(byPath[path], repetition, path, progress, signal));
    }
    runs.sort((a, b) => a.repetition - b.repetition || a.path.localeCompare(b.path));
    return {
      machine: { cpus: availableParallelism(), loadAverage: loadavg() },
      runs,
      p50OverheadMs: figure(runs, (proxied, direct) => proxied.p50Ms - direct.p50Ms, GOAL_P50_OVERHEAD_MS, true),
      throughputRatio: figure(
        runs,
        (proxied, direct) => proxied.callsPerSecond / direct.callsPerSecond,
        GOAL_THROUGHPUT_RATIO,
        false,
      ),
    };
  } finally {
    progress.stop();
    for (const client of clients) client.close();
    await toxiproxy?.stop();
    if (sink) await stopChild(sink, STOP_GRACE_MS);
    rmSync(data, { recursive: true, force: true });
  }
}

/** The runs as a table, then each same-repetition comparison beside its goal. */
export function proxyOverheadText(report: ProxyOverheadReport): string {
  const ms = (value: number) => value.toFixed(3);
  const verdict = ({ met }: ProxyOverheadFigure) => (met ? 'met' : 'MISSED');
  const { p50OverheadMs: overhead, throughputRatio: ratio } = report;
  return (
    [
      markdownTable(
        ['repetition', 'path', 'p50 ms (conc 1)', 'p99 ms (conc 1)', `calls/s (conc ${CONCURRENCY})`],
        report.runs.map((run) => [
          String(run.repetition),
          run.path,
          ms(run.p50Ms),
          ms(run.p99Ms),
          run.callsPerSecond.toFixed(0),
        ]),
        [false, false, true, true, true],
      ),
      '',
      `proxied p50 - direct p50, conc 1:      ${ms(overhead.median)} ms (per repetition: ` +
        `${overhead.perRepetition.map(ms).join(', ')}; goal <= ${overhead.goal} ms: ${verdict(overhead)})`,
      `proxied / direct throughput, conc ${CONCURRENCY}: ${ratio.median.toFixed(2)} (per repetition: ` +
        `${ratio.perRepetition.map((r) => r.toFixed(2)).join(', ')}; goal >= ${ratio.goal}: ${verdict(ratio)})`,
      `(medians over ${REPETITIONS} repetitions; unary GetFence against a real sink process;` +
        ` proxy in this process, no toxics; loopback; ${report.machine.cpus} CPUs, load average ` +
        `${report.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')} at the end)`,
    ].join('\n') + '\n'
  );
}
