// The chaos workload: several `fencer worker` processes (built on the worker
// library) looping on a few resources — acquire, a result per step, renew,
// release, with think time — every call they make recorded as a history
// operation, and at the end the sink's state read back for the checker.
import { readFileSync } from 'node:fs';
import { ResultNotFoundError, SinkConnection } from '@fencer/client';
import { startWorker, type Cluster, type WorkerProcess } from '@fencer/supervisor';
import { operationFromCall, type FinalState, type Operation } from '../checker/history.js';

/** What the workload runs. */
export interface WorkloadOptions {
  /** Worker identities, each with credentials in the cluster (ClusterOptions.workers). */
  readonly workers: readonly string[];
  /** Resources; worker i works on resource i mod their count. */
  readonly resources: readonly string[];
  readonly ttlMs: number;
  /** Think time before each result, and results per lease. */
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

/** Running workers and the history they are writing. */
export class Workload {
  readonly workers: readonly WorkerProcess[];
  readonly #operations: Operation[];

  private constructor(workers: WorkerProcess[], operations: Operation[]) {
    this.workers = workers;
    this.#operations = operations;
  }

  /** Starts every worker, each through the cluster's proxies with its own token. */
  static async start(cluster: Cluster, options: WorkloadOptions): Promise<Workload> {
    const operations: Operation[] = [];
    const workers = await Promise.all(
      options.workers.map((owner, i) =>
        startWorker({
          coordinator: cluster.links.workersToCoordinator,
          sink: cluster.links.workersToSink,
          owner,
          ...(cluster.credentials ? { tokenFile: cluster.credentials.workerTokenFiles[owner]! } : {}),
          args: [
            '--resource',
            options.resources[i % options.resources.length]!,
            '--ttl-ms',
            String(options.ttlMs),
            '--steps',
            String(options.steps),
            '--step-ms',
            String(options.stepMs),
            '--call-timeout-ms',
            String(options.callTimeoutMs),
          ],
          onEvent: (event) => {
            if (event.event === 'call') operations.push(operationFromCall(operations.length + 1, owner, event));
          },
        }),
      ),
    );
    return new Workload(workers, operations);
  }

  /** Every call recorded so far, in the order the events arrived. */
  get operations(): readonly Operation[] {
    return this.#operations;
  }

  /** The pid of a worker, for process nemeses. */
  pidOf(owner: string): number {
    const worker = this.workers.find((w) => w.owner === owner);
    if (!worker?.child.pid) throw new Error(`no running worker ${owner}`);
    return worker.child.pid;
  }

  /** Stops every worker (thawing any that a nemesis left frozen); calls in flight end as unknown or not at all. */
  async stop(): Promise<void> {
    for (const worker of this.workers) worker.child.kill('SIGCONT');
    await Promise.all(this.workers.map((worker) => worker.stop(3_000)));
  }
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
    ...(cluster.credentials ? { token: adminToken(cluster.credentials.credentialsFile) } : {}),
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

function adminToken(credentialsFile: string): string {
  const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as { token: string; role: string }[];
  const admin = credentials.find((c) => c.role === 'admin');
  if (!admin) throw new Error(`${credentialsFile} has no admin credential to read the final state with`);
  return admin.token;
}
