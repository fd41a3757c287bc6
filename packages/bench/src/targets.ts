// What a bench run measures against, started once per run in one temporary
// directory: a sink and a coordinator as production runs them (separate
// `fencer` processes, bearer-token auth on, the coordinator dialing the sink
// directly), the echo server, etcd when it is installed, and scratch space
// for the in-process raw limits (LevelDB, fdatasync); with etcd, a second
// coordinator on the same sink keeping its state in that etcd (--store etcd,
// H1). Not startCluster: its fault proxy between the coordinator and the
// sink would be measured too. A case may start processes of its own the
// same way: sink Write across sinks starts its sinks and the coordinator
// fronting them (startShards).
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { basename, join } from 'node:path';
import {
  coordinatorArgs,
  replicasServing,
  credentialToken,
  ensureCredentials,
  findEtcd,
  spawnLogged,
  startEtcdCluster,
  spawnReady,
  stopChild,
  type ClusterCredentials,
  type EtcdCluster,
  type ReadyChild,
} from '@fencer/supervisor';

/** The worker identity every bench call runs as (A3: owner_id equals it). */
export const BENCH_WORKER = 'worker-a';

const STOP_GRACE_MS = 5_000;
/** The bench owner's Acquire rate limit: far above what two cores can do. */
const BENCH_ACQUIRES_PER_SECOND = 1_000_000;
/** The bench's request-record quotas: above what a run of any length on two cores grants. */
const BENCH_REQUEST_RECORDS = 100_000_000;

/** The etcd prefix of the --store etcd coordinator's state: apart from the failover replicas' (failover.ts). */
const ETCD_STORE_PREFIX = '/fencer-bench-store/';
/** How long a --store etcd coordinator may take to win its first election on an etcd of its own. */
const FIRST_ELECTION_MS = 30_000;

/** The running processes and places a run's cases use. */
export interface Targets {
  readonly sink: ReadyChild;
  readonly coordinator: ReadyChild;
  /** A coordinator on the same sink with --store etcd on `etcd`, leading; null without etcd. */
  readonly etcdCoordinator: ReadyChild | null;
  /** The run's credentials: what another coordinator on the sink (the failover replicas) is started with. */
  readonly credentials: ClusterCredentials;
  /** Where the targets' logs go. */
  readonly logs: string;
  /** The bearer token of BENCH_WORKER. */
  readonly workerToken: string;
  readonly echo: ReadyChild;
  /** A one-member etcd; null when etcd is not installed (`etcdNote` then says so). */
  readonly etcd: EtcdCluster | null;
  readonly etcdNote?: string;
  /** A directory of the run's own for in-process raw limits. */
  readonly scratch: string;
}

/** The targets, and how to stop everything that was started. */
export interface StartedTargets {
  readonly targets: Targets;
  stop(): Promise<void>;
}

/** Children started one after another, and how to stop them all, the last started first. */
function processGroup(signal: AbortSignal) {
  const started: (() => Promise<unknown>)[] = [];
  return {
    /** Starts a child, to be stopped with the group. */
    async child(start: () => Promise<ReadyChild>): Promise<ReadyChild> {
      const ready = await start();
      started.push(() => stopChild(ready, STOP_GRACE_MS));
      signal.throwIfAborted();
      return ready;
    },
    /** Something else started, stopped with the group. */
    add(stopOne: () => Promise<unknown>): void {
      started.push(stopOne);
      signal.throwIfAborted();
    },
    /** Stops each once; a dependent (a coordinator) before what it depends on (its sinks). */
    async stop(): Promise<void> {
      for (const stopOne of started.splice(0).reverse()) await stopOne();
    },
  };
}

/** A `fencer sink` on a free loopback port, storing under `data`, taking the run's credentials. */
function spawnSink(what: string, data: string, credentials: ClusterCredentials, log: string, signal: AbortSignal) {
  return spawnLogged(
    what,
    ['sink', '--listen', '127.0.0.1:0', '--data', data, '--credentials', credentials.credentialsFile],
    log,
    signal,
  );
}

/**
 * Starts every target under `data` (which must exist and be the run's own).
 * Whatever fails to start stops what had started before the error is thrown.
 */
export async function startTargets(data: string, signal: AbortSignal): Promise<StartedTargets> {
  const logs = join(data, 'logs');
  const scratch = join(data, 'scratch');
  mkdirSync(logs, { recursive: true });
  mkdirSync(scratch, { recursive: true });
  const { child, add, stop } = processGroup(signal);
  try {
    const credentials = ensureCredentials(data, [BENCH_WORKER]);
    const sink = await child(() => spawnSink('sink', join(data, 'sink'), credentials, join(logs, 'sink.log'), signal));
    const coordinator = await child(() =>
      spawnLogged(
        'coordinator',
        benchCoordinatorArgs({ data: join(data, 'coordinator'), sink: sink.ready.address, credentials }),
        join(logs, 'coordinator.log'),
        signal,
      ),
    );
    const echo = await child(() =>
      spawnReady(fileURLToPath(new URL('./echo-server.js', import.meta.url)), [], { signal }),
    );
    let etcd: EtcdCluster | null = null;
    if (findEtcd()) {
      etcd = await startEtcdCluster({ members: 1, dataDir: join(data, 'etcd'), logDir: logs });
      const running = etcd;
      add(() => running.stop(STOP_GRACE_MS));
    }
    const etcdCoordinator = etcd
      ? await child(() =>
          spawnLogged(
            'coordinator on etcd',
            benchCoordinatorArgs({
              data: join(data, 'coordinator-etcd'),
              sink: sink.ready.address,
              credentials,
              store: etcdStoreArgs(etcd.endpoints, ETCD_STORE_PREFIX),
            }),
            join(logs, 'coordinator-etcd.log'),
            signal,
          ),
        )
      : null;
    if (etcdCoordinator) await untilLeading([etcdCoordinator.ready.address], FIRST_ELECTION_MS, signal);
    return {
      targets: {
        sink,
        coordinator,
        etcdCoordinator,
        credentials,
        logs,
        workerToken: credentialToken(credentials.credentialsFile, { identity: BENCH_WORKER }),
        echo,
        etcd,
        ...(etcd ? {} : { etcdNote: 'etcd is not installed (apt-get install etcd-server): its rows are skipped' }),
        scratch,
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A sink of a case's own, by the name the coordinator fronting it knows it by (P1). */
export interface NamedSink {
  readonly name: string;
  readonly server: ReadyChild;
}

/** Sinks of a case's own, the coordinator fronting them, and how to stop them. */
export interface Shards {
  readonly sinks: readonly NamedSink[];
  readonly coordinator: ReadyChild;
  stop(): Promise<void>;
}

/**
 * Starts `count` sinks named sink1, sink2, … and one coordinator fronting
 * them all (--sink NAME=HOST:PORT each, P1), under `dir` (new, the case's
 * own), with the run's credentials and their logs beside the run's.
 * Whatever fails to start stops what had started before the error is thrown.
 */
export async function startShards(targets: Targets, dir: string, count: number, signal: AbortSignal): Promise<Shards> {
  const { child, stop } = processGroup(signal);
  const log = (name: string) => join(targets.logs, `${basename(dir)}-${name}.log`);
  try {
    const sinks: NamedSink[] = [];
    // One after the other: a group stopped mid-start must know every child it has.
    for (let index = 1; index <= count; index++) {
      const name = `sink${index}`;
      const server = await child(() =>
        spawnSink(`${name} of ${count}`, join(dir, name), targets.credentials, log(name), signal),
      );
      sinks.push({ name, server });
    }
    const coordinator = await child(() =>
      spawnLogged(
        `coordinator of ${count} sinks`,
        benchCoordinatorArgs({
          data: join(dir, 'coordinator'),
          sink: sinks.map(({ name, server }) => `${name}=${server.ready.address}`),
          credentials: targets.credentials,
        }),
        log('coordinator'),
        signal,
      ),
    );
    return { sinks, coordinator, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Where a bench coordinator serves from, and on what. */
export interface BenchCoordinator {
  readonly data: string;
  /** --sink HOST:PORT, or each of several as NAME=HOST:PORT (P1). */
  readonly sink: string | readonly string[];
  readonly credentials: ClusterCredentials;
  /** HOST:PORT; default a free loopback port. */
  readonly listen?: string;
  /** --store etcd flags (replicaStoreArgs and more); absent: LevelDB under `data`. */
  readonly store?: readonly string[];
}

/** The `fencer coordinator` arguments of every coordinator the bench starts. */
export function benchCoordinatorArgs({
  data,
  sink,
  credentials,
  listen = '127.0.0.1:0',
  store = [],
}: BenchCoordinator): string[] {
  return [
    'coordinator',
    ...coordinatorArgs({ listen, data, sinks: typeof sink === 'string' ? [sink] : sink, credentials }),
    ...store,
    // Every slot of every case acquires as the one bench owner: V4's
    // per-owner Acquire rate (100/s, burst 100) would refuse the leases
    // of the second 64-slot case and cap Acquire+Release at 100/s,
    // measuring the guard instead of the Acquire path. Likewise the
    // request records (R3, kept for their TTL): a full run's tens of
    // thousands of cycles would hit the per-owner quota mid-case.
    '--max-acquires-per-second',
    String(BENCH_ACQUIRES_PER_SECOND),
    '--max-records-per-owner',
    String(BENCH_REQUEST_RECORDS),
    '--max-request-records',
    String(BENCH_REQUEST_RECORDS),
  ];
}

/**
 * The flags of a coordinator keeping its state in etcd under `prefix` (H1);
 * it advertises the address it listens on (H7), which is what the bench's
 * clients dial. `extra`: more flags, e.g. --leader-ttl-ms.
 */
export function etcdStoreArgs(endpoints: readonly string[], prefix: string, extra: readonly string[] = []): string[] {
  return ['--store', 'etcd', '--etcd', endpoints.join(','), '--etcd-prefix', prefix, ...extra];
}

/** How often untilLeading asks the replicas' health. */
const LEADER_POLL_MS = 50;

/**
 * Resolves with the index of the first of `addresses` whose health says it
 * leads (H2: SERVING); rejects when none does within `timeoutMs`, or with
 * the signal's reason.
 */
export async function untilLeading(
  addresses: readonly string[],
  timeoutMs: number,
  signal: AbortSignal,
): Promise<number> {
  const named = addresses.map((address, index) => ({ name: String(index), address }));
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    signal.throwIfAborted();
    const serving = await replicasServing(named, 1_000);
    if (serving.length > 0) return Number(serving[0]);
    if (performance.now() > deadline)
      throw new Error(`no coordinator of ${addresses.join(', ')} led within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, LEADER_POLL_MS));
  }
}
