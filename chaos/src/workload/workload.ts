// The chaos workload: several `fencer worker` processes (built on the worker
// library) on a few resources, each running a seeded generator's mix of
// calls or looping (acquire, a result per step, renew, release), with think
// time — and, at the end of a run, the sink's state read back for the
// checker. (Scenario starts the workers and records their calls.)
import { ResultNotFoundError, SinkConnection } from '@fencer/client';
import { credentialToken, type Cluster } from '@fencer/supervisor';
import { MIXES, type MixName } from '@fencer/worker';
import type { FinalState, Operation } from '../checker/history.js';

/** What the workload runs. */
export interface WorkloadOptions {
  /** Worker identities, each with credentials in the cluster (ClusterOptions.workers). */
  readonly workers: readonly string[];
  /** Resources; worker i works on resource i mod their count. */
  readonly resources: readonly string[];
  readonly ttlMs: number;
  /** Think time before each result (a mix: mean think time before each call), and results per lease (looping). */
  readonly stepMs: number;
  readonly steps: number;
  /** Deadline of each of the workers' calls. */
  readonly callTimeoutMs: number;
}

/** Sensible defaults: four workers on two resources, leases of a second. */
export const DEFAULT_WORKLOAD: WorkloadOptions = Object.freeze({
  workers: ['worker-a', 'worker-b', 'worker-c', 'worker-d'],
  resources: ['job-1', 'job-2'],
  ttlMs: 1_000,
  stepMs: 60,
  steps: 4,
  callTimeoutMs: 500,
});

/** What the workers of a run do: a generator's mix of calls (`fencer worker --mix`), or `loop`. */
export type WorkloadMix = MixName | 'loop';

/** Every workload mix, the generator's first. */
export const WORKLOAD_MIXES: readonly WorkloadMix[] = Object.freeze([...(Object.keys(MIXES) as MixName[]), 'loop']);

type WorkerOptions = Omit<WorkloadOptions, 'workers' | 'resources'>;

/** The `fencer worker` flags of one looping worker of the workload on `resource`. */
export function loopingWorkerArgs(resource: string, options: WorkerOptions): string[] {
  return [...workerArgs(resource, options), '--steps', String(options.steps)];
}

/** The `fencer worker` flags of one worker of the workload on `resource` running `mix`, its calls drawn from `seed`. */
export function mixWorkerArgs(resource: string, mix: MixName, seed: number, options: WorkerOptions): string[] {
  return [...workerArgs(resource, options), '--mix', mix, '--seed', String(seed)];
}

function workerArgs(resource: string, options: WorkerOptions): string[] {
  return [
    '--resource',
    resource,
    '--ttl-ms',
    String(options.ttlMs),
    '--step-ms',
    String(options.stepMs),
    '--call-timeout-ms',
    String(options.callTimeoutMs),
  ];
}

/**
 * The sink's state after a run, read straight from the sink (not through a
 * proxy) with the admin's credentials: every resource's fence, and every
 * result id any write of the history named.
 */
export async function readFinalState(cluster: Cluster, operations: readonly Operation[]): Promise<FinalState> {
  const sink = new SinkConnection({
    address: cluster.sink.ready.address,
    callTimeoutMs: 5_000,
    ...(cluster.credentials ? { token: credentialToken(cluster.credentials.credentialsFile, { role: 'admin' }) } : {}),
  });
  try {
    const writes = operations.filter((op) => op.method === 'Write');
    const resources = new Set(operations.map((op) => String(op.request.resource)));
    const fences: Record<string, string> = {};
    const results: Record<string, Record<string, { token: string; payload: string } | null>> = {};
    for (const resource of resources) {
      fences[resource] = (await sink.getFence(resource)).toString();
      results[resource] = {};
    }
    for (const op of writes) {
      const resource = String(op.request.resource);
      const resultId = String(op.request.result_id);
      if (results[resource]![resultId] !== undefined) continue;
      results[resource]![resultId] = await sink.read(resource, resultId).then(
        (stored) => ({ token: stored.token.toString(), payload: stored.payload.toString() }),
        (error: unknown) => {
          if (error instanceof ResultNotFoundError) return null;
          throw error;
        },
      );
    }
    return { fences, results };
  } finally {
    sink.close();
  }
}
