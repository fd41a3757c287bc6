// What --max-idle-resources saves (issue 10, V4): a real `fencer coordinator`
// process, against a real sink, takes ACQUIRES Acquire+Release pairs on
// distinct resources; its resident set size, V8 heap and resource-entry
// gauge are read from its own /metrics before and after, once per bound.
// Run it after a build:
//
//   node chaos/dist/bench/coordinator-memory.js
//
// The rate and record limits are raised so that none refuses the load, and
// request records are kept only a second (R3), so what stays behind is the
// resource entries the bound is about. A bound above ACQUIRES keeps every
// entry, as the coordinator did before the bound existed. Measured, not
// asserted: RSS also holds whatever the allocator has not given back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  fencing,
  unaryCall,
  type AcquireResponse__Output,
  type CoordinatorClient,
  type ReleaseResponse__Output,
} from '@fencer/proto';
import { fencerBin, spawnReady, stopChild } from '@fencer/supervisor';

const ACQUIRES = 50_000;
const CONCURRENCY = 32;
const BOUNDS = [0, 10_000, 1_000_000] as const;
const CALL_DEADLINE_MS = 10_000;
const RETENTION_MS = 1_000;
/** Long enough for several R3 sweeps (one a second at this retention) after the load. */
const SETTLE_MS = 4_000;
const TTL_MS = '60000';

const progress = (text: string) => process.stderr.write(`coordinator-memory: ${text}\n`);

interface Sample {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  readonly activeEntries: number;
  readonly idleEntries: number;
}

interface Run {
  readonly bound: number;
  readonly before: Sample;
  readonly after: Sample;
  readonly pairsPerSecond: number;
}

async function sample(metricsAddress: string): Promise<Sample> {
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
async function metricsAddress(stderr: () => string): Promise<string> {
  for (let waitedMs = 0; waitedMs < 5_000; waitedMs += 50) {
    for (const line of stderr().split('\n')) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { msg?: string; metrics?: string };
      if (entry.msg === 'coordinator ready' && entry.metrics) return entry.metrics;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
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

async function measure(sinkAddress: string, dataDir: string, bound: number): Promise<Run> {
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
    const metrics = await metricsAddress(() => stderr);
    const before = await sample(metrics);
    progress(`bound ${bound}: ${ACQUIRES} Acquire+Release pairs at concurrency ${CONCURRENCY}`);
    const startedMs = performance.now();
    let issued = 0;
    const worker = async () => {
      while (issued < ACQUIRES) {
        const n = issued++;
        await acquireAndRelease(client, n, bound);
        if (n % 10_000 === 0) progress(`bound ${bound}: ${n} done`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const pairsPerSecond = ACQUIRES / ((performance.now() - startedMs) / 1_000);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    return { bound, before, after: await sample(metrics), pairsPerSecond };
  } finally {
    client.close();
    await stopChild(coordinator, 5_000);
  }
}

function table(runs: readonly Run[]): string {
  const mb = (value: number) => value.toFixed(1);
  const lines = [
    '| --max-idle-resources | RSS before MB | RSS after MB | heap before MB | heap after MB | entries after (active/idle) | pairs/s |',
    '| -------------------- | ------------- | ------------ | -------------- | ------------- | --------------------------- | ------- |',
    ...runs.map((run) =>
      [
        String(run.bound).padEnd(20),
        mb(run.before.rssMb).padStart(13),
        mb(run.after.rssMb).padStart(12),
        mb(run.before.heapUsedMb).padStart(14),
        mb(run.after.heapUsedMb).padStart(13),
        `${run.after.activeEntries}/${run.after.idleEntries}`.padStart(27),
        run.pairsPerSecond.toFixed(0).padStart(7),
      ].reduce((line, cell) => `${line} ${cell} |`, '|'),
    ),
    '',
    `(${ACQUIRES} Acquire+Release pairs on distinct resources per run, a fresh coordinator process each;` +
      ` request records kept ${RETENTION_MS} ms; "after" read ${SETTLE_MS} ms after the last Release)`,
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fencer-coordinator-memory-'));
  let sink: Awaited<ReturnType<typeof spawnReady>> | undefined;
  try {
    progress('starting a sink process');
    sink = await spawnReady(fencerBin(), [
      'sink',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dataDir, 'sink'),
    ]);
    const runs: Run[] = [];
    for (const bound of BOUNDS) runs.push(await measure(sink.ready.address, dataDir, bound));
    process.stdout.write(table(runs) + '\n');
  } finally {
    if (sink) await stopChild(sink, 5_000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  progress(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
