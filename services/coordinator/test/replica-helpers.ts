// Shared by the replica tests (H): `fencer coordinator --store etcd` children
// on one real etcd, each file on a prefix of its own, and ways to tell which
// replica leads without assuming it.
import { randomUUID } from 'node:crypto';
import { SERVICE_NAMES } from '@fencer/proto';
import {
  coordinatorApi,
  coordinatorClient,
  eventually,
  healthStatus,
  startFencer,
  stopFencer,
  type FencerProcess,
} from '@fencer/testkit';

/**
 * The session TTL the replica tests use: short, so failovers are quick
 * (etcd rounds it up to whole seconds, at least its minimum of 2 s).
 */
export const TEST_LEADER_TTL_MS = 1_200;

/** A replica started by startReplica, with a client to it. */
export interface Replica {
  readonly process: FencerProcess;
  readonly address: string;
  readonly api: ReturnType<typeof coordinatorApi>;
  /** Whether it reports fencing.v1.Coordinator SERVING (H2: the leader only); false when it does not answer. */
  serving(): Promise<boolean>;
  /** Stops it (SIGTERM, then SIGKILL) and closes its client. */
  stop(): Promise<void>;
}

/** A fresh --etcd-prefix: every test's replicas elect and store apart. */
export function freshPrefix(): string {
  return `/fencer-test/${randomUUID()}/`;
}

/** `fencer coordinator --store etcd` (--insecure) on a port-0 address, fronting `sink`. */
export async function startReplica(options: {
  etcd: string;
  sink: string;
  prefix: string;
  leaderTtlMs?: number;
}): Promise<Replica> {
  const child = await startFencer([
    'coordinator',
    '--insecure',
    '--listen',
    '127.0.0.1:0',
    '--sink',
    options.sink,
    '--store',
    'etcd',
    '--etcd',
    options.etcd,
    '--etcd-prefix',
    options.prefix,
    '--leader-ttl-ms',
    String(options.leaderTtlMs ?? TEST_LEADER_TTL_MS),
  ]);
  const client = coordinatorClient(child.address);
  return {
    process: child,
    address: child.address,
    api: coordinatorApi(client),
    serving: async () => {
      try {
        return (await healthStatus(child.address, SERVICE_NAMES.coordinator, 2_000)) === 'SERVING';
      } catch {
        return false;
      }
    },
    stop: async () => {
      client.close();
      await stopFencer(child);
    },
  };
}

/** The one replica of `replicas` that reports SERVING, once exactly one does (bounded wait). */
export function leaderOf(replicas: readonly Replica[], timeoutMs = 20_000): Promise<Replica> {
  return eventually(
    async () => {
      const serving = await Promise.all(replicas.map((replica) => replica.serving()));
      const leaders = replicas.filter((_, index) => serving[index]);
      return leaders.length === 1 ? leaders[0] : undefined;
    },
    { what: 'exactly one replica SERVING', timeoutMs },
  );
}

/** An Acquire request for `resource` with a fresh request id. */
export function acquireRequest(resource: string, ownerId: string, ttlMs = 60_000) {
  return { request_id: randomUUID(), resource, owner_id: ownerId, incarnation: '1', ttl_ms: String(ttlMs) };
}
