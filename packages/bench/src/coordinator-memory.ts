// `fencer bench --coordinator-memory`: what --max-idle-resources saves
// (issue 10, V4). A real `fencer coordinator` process, against a real sink,
// takes ACQUIRES Acquire+Release pairs on distinct resources; its resident
// set size, V8 heap and resource-entry gauge are read from its own /metrics
// before and after, once per bound.
//
// The rate and record limits are raised so that none refuses the load, and
// request records are kept only a second (R3), so what stays behind is the
// resource entries the bound is about. A bound above ACQUIRES keeps every
// entry, as the coordinator did before the bound existed. Measured, not
// asserted: RSS also holds whatever the allocator has not given back.
import { rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import {
  fencing,
  unaryCall,
  type AcquireResponse__Output,
  type CoordinatorClient,
  type ReleaseResponse__Output,
} from '@fencer/proto';
import { fencerBin, spawnReady, stopChild, type ReadyChild } from '@fencer/supervisor';
import type { Progress } from './progress.js';
import { markdownTable } from '@fencer/common';
import { runDirectory } from './run.js';

/** What `fencer bench --coordinator-memory` runs with. */
export interface CoordinatorMemoryConfig {
  /** Where the run's own temporary directory (the sink's and coordinators' data) is made. */
  readonly dataParent: string;
}

const ACQUIRES = 50_000;
const CONCURRENCY = 32;
const BOUNDS = [0, 10_000, 1_000_000] as const;
const CALL_DEADLINE_MS = 10_000;
const RETENTION_MS = 1_000;
/** Long enough for several R3 sweeps (one a second at this retention) after the load. */
const SETTLE_MS = 4_000;
const TTL_MS = '60000';
const STOP_GRACE_MS = 5_000;

/** What the coordinator's /metrics said at one moment. */
export interface CoordinatorSample {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  readonly activeEntries: number;
  readonly idleEntries: number;
}

/** One bound's coordinator: before the load, SETTLE_MS after it, and how fast the load went. */
export interface CoordinatorMemoryRun {
  readonly bound: number;
  readonly before: CoordinatorSample;
  readonly after: CoordinatorSample;
  readonly pairsPerSecond: number;
}

export interface CoordinatorMemoryReport {
  readonly machine: { readonly cpus: number; readonly loadAverage: readonly number[] };
  /** One per bound, in BOUNDS order. */
  readonly runs: readonly CoordinatorMemoryRun[];
}

async function sample(metricsAddress: string): Promise<CoordinatorSample> {
  const text = await (await fetch(`http://${metricsAddress}/metrics`)).text();
  const value = (line: RegExp) => Number(line.exec(text)?.[1] ?? Number.NaN);
  const mb = (bytes: number) => bytes / (1024 * 1024);
  return {
    rssMb: mb(value(/^process_resident_memory_bytes (\d+)$/m)),
    heapUsedMb: mb(value(/^nodejs_heap_size_used_bytes (\d+)$/m)),
    activeEntries: value(/^fencer_coordinator_resource_entries\{state="active"\} (\d+)$/m),
    idleEntries: value(/^fencer_coordinator_resource_entries\{state="idle"\} (\d+)$/m),
  };
}

/** The /metrics address from the coordinator's ready log line (stderr may trail the stdout ready line a little). */
async function metricsAddress(stderr: () => string, signal: AbortSignal): Promise<string> {
  for (let waitedMs = 0; waitedMs < 5_000; waitedMs += 50) {
    signal.throwIfAborted();
    for (const line of stderr().split('\n')) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { msg?: string; metrics?: string };
      if (entry.msg === 'coordinator ready' && entry.metrics) return entry.metrics;
    }
    await sleep(50);
  }
  throw new Error('the coordinator logged no metrics address within 5 s');
}

async function acquireAndRelease(client: CoordinatorClient, n: number, bound: number): Promise<void> {
  const resource = `bench-${bound}-${n}`;
  const owner = `owner-${n % CONCURRENCY}`;
  const { lease } = await unaryCall<object, AcquireResponse__Output>(
    client,
    client.Acquire,
    { request_id: `q-${resource}`, resource, owner_id: owner, incarnation: '1', ttl_ms: TTL_MS },
    { timeoutMs: CALL_DEADLINE_MS },
  );
  if (!lease) throw new Error(`${resource}: granted without a lease`);
  const { released } = await unaryCall<object, ReleaseResponse__Output>(
    client,
    client.Release,
    { resource, owner_id: owner, incarnation: '1', token: lease.token },
    { timeoutMs: CALL_DEADLINE_MS },
  );
  if (!released) throw new Error(`${resource}: not released`);
}

async function measure(
  sinkAddress: string,
  dataDir: string,
  bound: number,
  progress: Progress,
  signal: AbortSignal,
): Promise<CoordinatorMemoryRun> {
  const label = `--max-idle-resources ${bound}: ${ACQUIRES} Acquire+Release pairs at concurrency ${CONCURRENCY}`;
  progress.begin(label);
  let stderr = '';
  const coordinator = await spawnReady(
    fencerBin(),
    [
      'coordinator',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dataDir, `coordinator-${bound}`),
      '--sink',
      sinkAddress,
      '--metrics',
      '127.0.0.1:0',
      '--max-idle-resources',
      String(bound),
      '--max-acquires-per-second',
      String(10 * ACQUIRES),
      '--max-request-records',
      String(10 * ACQUIRES),
      '--max-records-per-owner',
      String(10 * ACQUIRES),
      '--request-retention-ms',
      String(RETENTION_MS),
    ],
    { onStderr: (text) => (stderr += text) },
  );
  const client = new fencing.Coordinator(coordinator.ready.address, grpc.credentials.createInsecure());
  try {
    const metrics = await metricsAddress(() => stderr, signal);
    const before = await sample(metrics);
    const startedMs = performance.now();
    let issued = 0;
    const worker = async () => {
      while (issued < ACQUIRES) {
        signal.throwIfAborted();
        await acquireAndRelease(client, issued++, bound);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const pairsPerSecond = ACQUIRES / ((performance.now() - startedMs) / 1_000);
    await sleep(SETTLE_MS, undefined, { signal });
    const after = await sample(metrics);
    progress.end(
      label,
      `RSS ${after.rssMb.toFixed(1)} MB, ${after.activeEntries}/${after.idleEntries} entries active/idle, ` +
        `${pairsPerSecond.toFixed(0)} pairs/s`,
    );
    return { bound, before, after, pairsPerSecond };
  } finally {
    client.close();
    await stopChild(coordinator, STOP_GRACE_MS);
  }
}

export async function runCoordinatorMemory(
  config: CoordinatorMemoryConfig,
  progress: Progress,
  signal: AbortSignal,
): Promise<CoordinatorMemoryReport> {
  const data = runDirectory(config.dataParent, 'fencer-coordinator-memory-');
  let sink: ReadyChild | undefined;
  try {
    progress.note('starting a sink process');
    sink = await spawnReady(fencerBin(), [
      'sink',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(data, 'sink'),
    ]);
    progress.start(BOUNDS.length);
    const runs: CoordinatorMemoryRun[] = [];
    for (const bound of BOUNDS) runs.push(await measure(sink.ready.address, data, bound, progress, signal));
    return { machine: { cpus: availableParallelism(), loadAverage: loadavg() }, runs };
  } finally {
    progress.stop();
    if (sink) await stopChild(sink, STOP_GRACE_MS);
    rmSync(data, { recursive: true, force: true });
  }
}

/** One row per bound, then what the rows were measured under. */
export function coordinatorMemoryText(report: CoordinatorMemoryReport): string {
  const mb = (value: number) => value.toFixed(1);
  return (
    [
      markdownTable(
        [
          '--max-idle-resources',
          'RSS before MB',
          'RSS after MB',
          'heap before MB',
          'heap after MB',
          'entries after (active/idle)',
          'pairs/s',
        ],
        report.runs.map((run) => [
          String(run.bound),
          mb(run.before.rssMb),
          mb(run.after.rssMb),
          mb(run.before.heapUsedMb),
          mb(run.after.heapUsedMb),
          `${run.after.activeEntries}/${run.after.idleEntries}`,
          run.pairsPerSecond.toFixed(0),
        ]),
        [false, true, true, true, true, true, true],
      ),
      '',
      `(${ACQUIRES} Acquire+Release pairs on distinct resources per run, a fresh coordinator process each;` +
        ` request records kept ${RETENTION_MS} ms; "after" read ${SETTLE_MS} ms after the last Release;` +
        ` ${report.machine.cpus} CPUs, load average ${report.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')} at the end)`,
    ].join('\n') + '\n'
  );
}
