// `fencer bench --memory`: the sink's resident memory as its stored results
// grow (issue 11: within +20 % from 100k to 1M). The sink keeps nothing per
// stored result in memory (LevelDB holds them, its caches are bounded), so
// RSS must level off once the process is warm, whatever the store holds.
// Results go in through the sink-write case's operations (WriteStream
// messages), the fastest durable way in; RSS is read from /proc after each tenth.
import { readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { CASES, type OpenCase } from './cases.js';
import type { Progress } from './progress.js';
import { runDirectory } from './run.js';
import { startTargets } from './targets.js';

/** What `fencer bench --memory` runs with. */
export interface MemoryConfig {
  /** Results stored in all; RSS is sampled after each tenth of them. */
  readonly results: number;
  readonly payloadBytes: number;
  /** Where the run's own temporary directory is made. */
  readonly dataParent: string;
}

/** RSS after `results` results were stored (acknowledged, hence durable). */
export interface MemoryCheckpoint {
  readonly results: number;
  readonly rssMiB: number;
}

export interface MemoryReport {
  readonly settings: MemoryConfig;
  readonly machine: { readonly cpus: number; readonly loadAverage: readonly number[] };
  readonly checkpoints: readonly MemoryCheckpoint[];
  /** RSS at the end over RSS at the first checkpoint (100k of 1M): the bound is 1.2. */
  readonly growth: number;
}

const CHECKPOINTS = 10;
/** Writes in flight: as many as the bench's highest concurrency. */
const IN_FLIGHT = 64;

/** The resident set size of `pid`, in MiB (Linux /proc). */
export function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  if (!line) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(line.split(/\s+/)[1]) / 1024;
}

export async function runMemory(config: MemoryConfig, progress: Progress, signal: AbortSignal): Promise<MemoryReport> {
  const data = runDirectory(config.dataParent, 'fencer-bench-memory-');
  let open: OpenCase | undefined;
  let stopTargets: (() => Promise<void>) | undefined;
  try {
    const started = await startTargets(data, signal);
    stopTargets = started.stop;
    const { targets } = started;
    const writes = CASES.find((c) => c.id === 'sink-write')!;
    const payload = Buffer.alloc(config.payloadBytes, 'x');
    open = await writes.open({ targets, slots: IN_FLIGHT, payload, signal });
    progress.start(CHECKPOINTS);
    const checkpoints: MemoryCheckpoint[] = [];
    let stored = 0;
    for (let checkpoint = 1; checkpoint <= CHECKPOINTS; checkpoint++) {
      const target = Math.round((config.results * checkpoint) / CHECKPOINTS);
      const label = `${target.toLocaleString('en')} results`;
      progress.begin(label);
      // Each slot writes until the tenth is reached; no more than `target` are ever sent.
      await Promise.all(
        open.operations.map(async (operation) => {
          while (stored < target) {
            signal.throwIfAborted();
            stored++;
            await operation();
          }
        }),
      );
      const rss = rssMiB(targets.sink.child.pid!);
      checkpoints.push({ results: target, rssMiB: rss });
      progress.end(label, `sink RSS ${rss.toFixed(1)} MiB`);
    }
    return {
      settings: config,
      machine: { cpus: availableParallelism(), loadAverage: loadavg() },
      checkpoints,
      growth: checkpoints.at(-1)!.rssMiB / checkpoints[0]!.rssMiB,
    };
  } finally {
    progress.stop();
    await open?.close().catch(() => undefined);
    await stopTargets?.();
    rmSync(data, { recursive: true, force: true });
  }
}

/** The checkpoints as a table, with the growth the issue bounds. */
export function memoryText(report: MemoryReport): string {
  const rows = report.checkpoints.map(
    (c) => `| ${c.results.toLocaleString('en').padStart(13)} | ${c.rssMiB.toFixed(1).padStart(12)} |`,
  );
  return (
    [
      `fencer bench --memory: ${report.settings.results.toLocaleString('en')} results of ${report.settings.payloadBytes} bytes ` +
        `through WriteStream, ${IN_FLIGHT} in flight; ${report.machine.cpus} CPUs, load average ` +
        `${report.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')} at the end`,
      '',
      '| stored results | sink RSS MiB |',
      '| -------------: | -----------: |',
      ...rows,
      '',
      `RSS at the end / at the first tenth: ${report.growth.toFixed(2)}× (issue 11 bounds it at 1.20×).`,
    ].join('\n') + '\n'
  );
}
