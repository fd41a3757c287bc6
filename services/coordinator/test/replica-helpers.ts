// Shared by the replica tests (H): `fencer coordinator --store etcd` children
// on one real etcd, each file on a prefix of its own, and ways to tell which
// replica leads without assuming it.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { SERVICE_NAMES } from '@fencer/proto';
import {
  coordinatorApi,
  coordinatorClient,
  eventually,
  healthStatus,
  startFencer,
  startTestEtcd,
  stopFencer,
  type FencerProcess,
  type TestEtcd,
} from '@fencer/testkit';
import { useSinkProcess } from './helpers.js';

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

/** Where a test replica keeps its state and sends its fences. */
export interface ReplicaOptions {
  /** HOST:PORT of etcd (--etcd). */
  readonly etcd: string;
  readonly sink: string;
  readonly prefix: string;
  readonly leaderTtlMs?: number;
}

/** The command line of `fencer coordinator --store etcd` (--insecure) on a port-0 address. */
export function replicaArgs(options: ReplicaOptions): string[] {
  return [
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
  ];
}

/** A replica (replicaArgs) once it listens: leading or not. */
export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const child = await startFencer(replicaArgs(options));
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

/**
 * For the calling test file: one real `fencer sink` and one real etcd,
 * started before its tests and stopped after them, and replicas on them
 * (start: each stopped after its test).
 */
export function useReplicaRig() {
  const sink = useSinkProcess();
  let etcd: TestEtcd | undefined;
  const started: Replica[] = [];
  beforeAll(async () => {
    etcd = await startTestEtcd();
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((replica) => replica.stop()));
  });
  afterAll(async () => {
    await etcd?.stop();
  });
  const running = (): TestEtcd => {
    if (!etcd) throw new Error('etcd is started in beforeAll; use it inside tests');
    return etcd;
  };
  return {
    sink,
    get etcd(): TestEtcd {
      return running();
    },
    /** `count` replicas on a fresh prefix, started at once. */
    start: async (count: number, options: Partial<ReplicaOptions> = {}): Promise<Replica[]> => {
      const all = { etcd: running().endpoint, sink: sink.address, prefix: freshPrefix(), ...options };
      const replicas = await Promise.all(Array.from({ length: count }, () => startReplica(all)));
      started.push(...replicas);
      return replicas;
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
