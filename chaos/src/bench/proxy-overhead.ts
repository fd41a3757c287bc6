// What the fault proxy costs a gRPC call when it injects nothing: unary
// GetFence against a real sink process, direct and through an in-process
// `startToxiproxy` proxy with no toxics, on loopback. Run it after a build:
//
//   node chaos/dist/bench/proxy-overhead.js
//
// Repetitions interleave the two paths (alternating which goes first), so
// drift of the machine hits both; the ratios compare runs of the same
// repetition. Progress goes to stderr, the table to stdout. Bounded: a fixed
// number of calls, each with a deadline, and each phase with a time limit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { fencing, unaryCall, type GetFenceResponse__Output, type SinkClient } from '@fencer/proto';
import { fencerBin, spawnReady, stopChild } from '@fencer/supervisor';
import { startToxiproxy } from '@fencer/toxiproxy';

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
const RESOURCE = 'bench';

/** The goals issue 7 sets for an idle proxy. */
const GOAL_P50_OVERHEAD_MS = 0.2;
const GOAL_THROUGHPUT_RATIO = 0.8;

type Path = 'direct' | 'proxied';

/** One measured run of one path: latency percentiles at concurrency 1 (ms) and calls per second at CONCURRENCY. */
interface Run {
  readonly repetition: number;
  readonly path: Path;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly callsPerSecond: number;
}

const progress = (text: string) => process.stderr.write(`proxy-overhead: ${text}\n`);

function getFence(client: SinkClient): Promise<GetFenceResponse__Output> {
  return unaryCall<{ resource: string }, GetFenceResponse__Output>(
    client,
    client.GetFence,
    { resource: RESOURCE },
    { timeoutMs: CALL_DEADLINE_MS },
  );
}

/** The q-quantile (0..1) of sorted samples, nearest rank. */
function quantile(sorted: readonly number[], q: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

function checkPhaseLimit(startedMs: number, what: string): void {
  if (performance.now() - startedMs > PHASE_LIMIT_MS) throw new Error(`${what} took over ${PHASE_LIMIT_MS} ms`);
}

async function serialLatencies(client: SinkClient, what: string): Promise<number[]> {
  const startedMs = performance.now();
  const samples: number[] = [];
  for (let i = 0; i < SERIAL_CALLS; i++) {
    const callStartedMs = performance.now();
    await getFence(client);
    samples.push(performance.now() - callStartedMs);
    if (i % 500 === 0) checkPhaseLimit(startedMs, what);
  }
  return samples.sort((a, b) => a - b);
}

async function concurrentThroughput(client: SinkClient, what: string): Promise<number> {
  const startedMs = performance.now();
  let issued = 0;
  const worker = async () => {
    while (issued < CONCURRENT_CALLS) {
      issued += 1;
      await getFence(client);
      if (issued % 1_000 === 0) checkPhaseLimit(startedMs, what);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return CONCURRENT_CALLS / ((performance.now() - startedMs) / 1_000);
}

async function measure(client: SinkClient, repetition: number, path: Path): Promise<Run> {
  const what = `repetition ${repetition} ${path}`;
  progress(`${what}: ${SERIAL_CALLS} calls at concurrency 1`);
  const latencies = await serialLatencies(client, what);
  progress(`${what}: ${CONCURRENT_CALLS} calls at concurrency ${CONCURRENCY}`);
  const callsPerSecond = await concurrentThroughput(client, what);
  return { repetition, path, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), callsPerSecond };
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

function table(runs: readonly Run[]): string {
  const ms = (value: number) => value.toFixed(3);
  const lines = [
    '| repetition | path    | p50 ms (conc 1) | p99 ms (conc 1) | calls/s (conc 64) |',
    '| ---------- | ------- | --------------- | --------------- | ----------------- |',
    ...runs.map((run) =>
      [
        String(run.repetition).padEnd(10),
        run.path.padEnd(7),
        ms(run.p50Ms).padStart(15),
        ms(run.p99Ms).padStart(15),
        run.callsPerSecond.toFixed(0).padStart(17),
      ].reduce((line, cell) => `${line} ${cell} |`, '|'),
    ),
  ];
  const overheads: number[] = [];
  const ratios: number[] = [];
  for (let repetition = 1; repetition <= REPETITIONS; repetition++) {
    const direct = runs.find((run) => run.repetition === repetition && run.path === 'direct');
    const proxied = runs.find((run) => run.repetition === repetition && run.path === 'proxied');
    if (!direct || !proxied) continue;
    overheads.push(proxied.p50Ms - direct.p50Ms);
    ratios.push(proxied.callsPerSecond / direct.callsPerSecond);
  }
  const overhead = median(overheads);
  const ratio = median(ratios);
  const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
  const overheadGoal = `goal <= ${GOAL_P50_OVERHEAD_MS} ms: ${verdict(overhead <= GOAL_P50_OVERHEAD_MS)}`;
  const ratioGoal = `goal >= ${GOAL_THROUGHPUT_RATIO}: ${verdict(ratio >= GOAL_THROUGHPUT_RATIO)}`;
  const eachOverhead = overheads.map(ms).join(', ');
  const eachRatio = ratios.map((r) => r.toFixed(2)).join(', ');
  lines.push(
    '',
    `proxied p50 - direct p50, conc 1:      ${ms(overhead)} ms (per repetition: ${eachOverhead}; ${overheadGoal})`,
    `proxied / direct throughput, conc ${CONCURRENCY}: ${ratio.toFixed(2)} (per repetition: ${eachRatio}; ${ratioGoal})`,
    `(medians over ${REPETITIONS} repetitions; unary GetFence against a real sink process;` +
      ' proxy in this process, no toxics; loopback)',
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fencer-proxy-overhead-'));
  const clients: grpc.Client[] = [];
  let sink: Awaited<ReturnType<typeof spawnReady>> | undefined;
  let toxiproxy: Awaited<ReturnType<typeof startToxiproxy>> | undefined;
  try {
    progress('starting a sink process and an in-process toxiproxy');
    sink = await spawnReady(fencerBin(), ['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', dataDir]);
    toxiproxy = await startToxiproxy({ listen: '127.0.0.1:0' });
    const proxyListen = await createProxy(toxiproxy.address, sink.ready.address);
    const direct = new fencing.Sink(sink.ready.address, grpc.credentials.createInsecure());
    const proxied = new fencing.Sink(proxyListen, grpc.credentials.createInsecure());
    clients.push(direct, proxied);
    const byPath: Record<Path, SinkClient> = { direct, proxied };
    progress(`sink ${sink.ready.address}, proxy ${proxyListen}; warming up both paths`);
    for (const client of [direct, proxied]) for (let i = 0; i < WARM_UP_CALLS; i++) await getFence(client);

    const runs: Run[] = [];
    for (let repetition = 1; repetition <= REPETITIONS; repetition++) {
      // Alternate which path goes first, so neither always runs on a warmer or cooler machine.
      const order: Path[] = repetition % 2 === 1 ? ['direct', 'proxied'] : ['proxied', 'direct'];
      for (const path of order) runs.push(await measure(byPath[path], repetition, path));
    }
    runs.sort((a, b) => a.repetition - b.repetition || a.path.localeCompare(b.path));
    process.stdout.write(table(runs) + '\n');
  } finally {
    for (const client of clients) client.close();
    await toxiproxy?.stop();
    if (sink) await stopChild(sink, 5_000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  progress(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
