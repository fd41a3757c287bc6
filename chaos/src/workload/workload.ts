// The chaos workload: several `fencer worker` processes (built on the worker
// library) on a few resources, each running a seeded generator's mix of
// calls or looping (acquire, a result per step, renew, release), with think
// time — and, at the end of a run, the sink's state read back for the
// checker. (Scenario starts the workers and records their calls.)
import { ResultNotFoundError, SinkConnection } from '@fencer/client';
import { credentialToken, type Cluster } from '@fencer/supervisor';
import { MIXES, type MixName } from '@fencer/worker';
import type { FinalState, Operation, StoredResult } from '../checker/history.js';

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
 * The sinks' state after a run, read straight from each sink (not through a
 * proxy) with the admin's credentials: every resource's fence, and every
 * result id any write of the history named. With several sinks, a
 * resource's owner is the sink that holds a fence for it (P4: no other ever
 * gets one), and its state is read there; a fence on a second sink, or a
 * result on a sink without a fence, is reported as misplaced.
 */
export async function readFinalState(cluster: Cluster, operations: readonly Operation[]): Promise<FinalState> {
  const token = cluster.credentials
    ? credentialToken(cluster.credentials.credentialsFile, { role: 'admin' })
    : undefined;
  const sinks = cluster.sinks.map(
    ({ name, child }) =>
      [
        name,
        new SinkConnection({ address: child.ready.address, callTimeoutMs: 5_000, ...(token ? { token } : {}) }),
      ] as const,
  );
  try {
    const resultIds = groupResultIds(operations);
    const fences: Record<string, string> = {};
    const results: Record<string, Record<string, StoredResult | null>> = {};
    const misplaced: string[] = [];
    for (const resource of new Set(operations.map((op) => String(op.request.resource)))) {
      const held = await Promise.all(
        sinks.map(async ([name, sink]) => ({ name, fence: await sink.getFence(resource) })),
      );
      const owners = held.filter(({ fence }) => fence > 0n);
      if (owners.length > 1)
        misplaced.push(
          `${resource} has a fence on ${owners.map(({ name, fence }) => `${name} (${fence})`).join(' and ')}`,
        );
      const owner = owners[0] ?? held[0]!;
      fences[resource] = owner.fence.toString();
      results[resource] = {};
      for (const [name, sink] of sinks) {
        for (const resultId of resultIds.get(resource) ?? []) {
          const stored = await readResult(sink, resource, resultId);
          if (name === owner.name) results[resource][resultId] = stored;
          else if (stored && !owners.some((o) => o.name === name))
            misplaced.push(
              `${name} holds ${resource}/${resultId} (token ${stored.token}) without a fence for ${resource}`,
            );
        }
      }
    }
    return { fences, results, ...(sinks.length > 1 ? { misplaced } : {}) };
  } finally {
    for (const [, sink] of sinks) sink.close();
  }
}

/** The result ids the history's writes named, by resource. */
function groupResultIds(operations: readonly Operation[]): Map<string, Set<string>> {
  const ids = new Map<string, Set<string>>();
  for (const op of operations) {
    if (op.method !== 'Write') continue;
    const resource = String(op.request.resource);
    if (!ids.has(resource)) ids.set(resource, new Set());
    ids.get(resource)!.add(String(op.request.result_id));
  }
  return ids;
}

/** A stored result as the checker reads it; null when the sink has none. */
async function readResult(sink: SinkConnection, resource: string, resultId: string): Promise<StoredResult | null> {
  return sink.read(resource, resultId).then(
    (stored) => ({ token: stored.token.toString(), payload: stored.payload.toString() }),
    (error: unknown) => {
      if (error instanceof ResultNotFoundError) return null;
      throw error;
    },
  );
}
