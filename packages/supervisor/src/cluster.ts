// A sink and a coordinator as separate `fencer` processes on one machine,
// wired together with generated credentials, every link through a named
// Toxiproxy proxy (its own `fencer toxiproxy`, or a running Toxiproxy): what `fencer cluster` runs,
// and what the demo and the chaos suite start. With `replicas`, several
// coordinator replicas on etcd (H) take the one coordinator's place, each
// behind proxies of its own, on an etcd the cluster starts or is given;
// with `sinks`, several sinks share the resources (P1), each behind proxies
// of its own for the workers and for every coordinator. This module
// starts and stops children; it never exits the process or handles signals
// (that is the caller's lifecycle).
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SERVICE_NAMES } from '@fencer/proto';
import { ConfigError, joinHostPort, splitHostPort } from '@fencer/cli-kit';
import { Toxiproxy, type Proxy } from 'toxiproxy-node-client';
import { ensureCredentials, type ClusterCredentials } from './credentials.js';
import { findEtcd, startEtcdCluster, type EtcdCluster, type EtcdMember } from './etcd.js';
import { fencerBin } from './fencer-bin.js';
import { healthStatus } from './health.js';
import {
  replicaListen,
  replicaName,
  replicaProxyNames,
  replicaStoreArgs,
  REPLICA_READY_MS,
  type EtcdMemberName,
  type ReplicaLinks,
  type ReplicaName,
} from './replicas.js';
import { sinkFlagValues, sinkListen, sinkName, sinkProxyNames, type SinkLinks, type SinkName } from './sinks.js';
import { spawnReady, stopChild, type ReadyChild } from './spawn.js';

/** The processes of a cluster, in start order (toxiproxy only when the cluster starts its own). */
export type ClusterService = 'toxiproxy' | 'sink' | 'coordinator';

/** The services a cluster can kill and restart (its Toxiproxy holds every proxy's state, so it stays up). */
export type RestartableService = Exclude<ClusterService, 'toxiproxy'>;

/**
 * Everything kill and restart address: a service, a coordinator replica, a
 * sink of several, or an etcd member the cluster started. With replicas,
 * 'coordinator' is coordinator-1; with several sinks, 'sink' is sink-1.
 */
export type ClusterTarget = RestartableService | ReplicaName | SinkName | EtcdMemberName;

/** The processes restart() starts again: all but the etcd members (theirs is another signature). */
export type RestartableProcess = RestartableService | ReplicaName | SinkName;

/** Options of Cluster.restart. */
export interface RestartOptions {
  /** Delete the service's data directory before it starts again: a lost disk. */
  readonly wipeData?: boolean;
}

/** The links of a cluster, each through its own Toxiproxy proxy. */
export type ClusterLink = 'workersToCoordinator' | 'workersToSink' | 'coordinatorToSink';

/** Proxy names as Toxiproxy's API knows them (what nemeses address). */
export const LINK_PROXY_NAMES: Readonly<Record<ClusterLink, string>> = Object.freeze({
  workersToCoordinator: 'workers_to_coordinator',
  workersToSink: 'workers_to_sink',
  coordinatorToSink: 'coordinator_to_sink',
});

/** What startCluster runs, and where. */
export interface ClusterOptions {
  /** Data directory: sink/ (sink-1/... with several), coordinator/, logs/, credentials.json, coordinator.token. */
  readonly data: string;
  /** HOST:PORT of each service; port 0 picks a free one. Several sinks listen from sinkListen up. */
  readonly sinkListen: string;
  readonly coordinatorListen: string;
  /** No credentials at all (A1 off); local experiments only. */
  readonly insecure: boolean;
  /**
   * Scripts run with node instead of `fencer` for these services, given
   * fencer's arguments (`<script> sink --listen ...`), on every start and
   * restart: a deliberately broken variant, for the chaos suite's negative controls.
   */
  readonly binaries?: { readonly sink?: string; readonly coordinator?: string };
  /**
   * Added to these services' environment on every start and restart, e.g. a
   * fake clock's LD_PRELOAD (the chaos suite's clock nemesis).
   */
  readonly env?: { readonly sink?: NodeJS.ProcessEnv; readonly coordinator?: NodeJS.ProcessEnv };
  /** SIGTERM to SIGKILL, per child, when stopping. */
  readonly stopGraceMs: number;
  /** More `fencer coordinator` flags, e.g. ['--fence-on-expiry']; kept across restarts. */
  readonly coordinatorFlags?: readonly string[];
  /** Worker identities to generate credentials for (default worker-a and worker-b). */
  readonly workers?: readonly string[];
  /** A running Toxiproxy's API (http://HOST:PORT) to create the proxies in; absent: start `fencer toxiproxy`. */
  /** Put before each proxy's name, so clusters sharing one Toxiproxy (TOXIPROXY_URL) keep their proxies apart. */
  readonly proxyPrefix?: string;
  readonly toxiproxyUrl?: string;
  /** Aborting while children are still starting stops them; startCluster then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * Coordinator replicas on etcd (H) instead of one coordinator on LevelDB;
   * absent: one coordinator, exactly as without it.
   */
  readonly replicas?: ReplicaOptions;
  /**
   * How many sinks share the resources (P1): sink-1, sink-2..., each with
   * its data under its name; absent or 1: one sink, exactly as without it.
   */
  readonly sinks?: number;
}

/** The replicas of a cluster, and their etcd. */
export interface ReplicaOptions {
  /** How many `fencer coordinator --store etcd` processes (coordinator-1...), listening from coordinatorListen up. */
  readonly count: number;
  /**
   * A running etcd's client endpoints (HOST:PORT); absent: the cluster
   * starts a 3-member etcd on loopback from the `etcd` on PATH.
   */
  readonly etcd?: readonly string[];
}

/** A coordinator replica of a running cluster. */
export interface Replica {
  readonly name: ReplicaName;
  /** Its current process: a new one after each restart, on the same address. */
  readonly child: ReadyChild;
  /** Each of its links' proxy names in the Toxiproxy API. */
  readonly proxyNames: ReplicaLinks;
  /** HOST:PORT each of its links' proxies listens on; workersToCoordinator is also its --advertise. */
  readonly links: ReplicaLinks;
  /** Its log file (its stderr). */
  readonly log: string;
}

/** A sink of a running cluster. */
export interface ClusterSink {
  /** 'sink' when it is the only one, else sink-1, sink-2...: the name the coordinators know it by. */
  readonly name: 'sink' | SinkName;
  /** Its current process: a new one after each restart, on the same address. */
  readonly child: ReadyChild;
  /** Each of its links' proxy names in the Toxiproxy API (coordinatorToSink: the one coordinator's, or coordinator-1's). */
  readonly proxyNames: SinkLinks;
  /** HOST:PORT each of its links' proxies listens on. */
  readonly links: SinkLinks;
  /** Its log file (its stderr). */
  readonly log: string;
}

/** The etcd a cluster's replicas share. */
export interface ClusterEtcd {
  /** Client endpoints (HOST:PORT), as given or as the started members listen. */
  readonly endpoints: readonly string[];
  /** The members the cluster started (etcd-1...), with their pids; none for a given etcd. */
  readonly members: readonly EtcdMember[];
}

/** How a child ended on its own, while the cluster was not stopping. */
export interface ChildExit {
  readonly service: ClusterService | ReplicaName | SinkName;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly log: string;
}

/** A running cluster. */
export interface Cluster {
  /** The absolute data directory. */
  readonly data: string;
  /** The current sink process (sink-1 with several): a new one after each restart, on the same address. */
  readonly sink: ReadyChild;
  /** Every sink in name order: the one sink, or sink-1, sink-2... */
  readonly sinks: readonly ClusterSink[];
  /** The current coordinator process (coordinator-1 with replicas): a new one after each restart, on the same address. */
  readonly coordinator: ReadyChild;
  /** The coordinator replicas in start order; empty without the replicas option. */
  readonly replicas: readonly Replica[];
  /** The etcd the replicas share; null without replicas. */
  readonly etcd: ClusterEtcd | null;
  /** The Toxiproxy API every link's proxy lives in, and its process when the cluster started it. */
  readonly toxiproxy: { readonly url: string; readonly child: ReadyChild | null };
  /**
   * Each link's proxy name in the Toxiproxy API (LINK_PROXY_NAMES, after the
   * proxyPrefix); with replicas, the coordinator's links are coordinator-1's;
   * with several sinks, the sink's are sink-1's.
   */
  readonly proxyNames: Readonly<Record<ClusterLink, string>>;
  /** HOST:PORT each link's proxy listens on: workers dial the first two, the coordinator dials the third. */
  readonly links: Readonly<Record<ClusterLink, string>>;
  /** Null when insecure. */
  readonly credentials: ClusterCredentials | null;
  /** Each process's log file (its stderr); with replicas, the coordinator's is coordinator-1's, with several sinks the sink's is sink-1's (each has its own). */
  readonly logs: Readonly<Record<ClusterService, string>>;
  /** Resolves when a child exits by itself; never for kill() or restart(), nor once stop() has begun. */
  readonly childExited: Promise<ChildExit>;
  /**
   * SIGKILLs the service (a crash) and resolves with how it exited (at once
   * if it already had). The exit is expected, so it is not reported on
   * childExited; restart() brings the service back.
   */
  kill(target: ClusterTarget): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Stops the service if it still runs (SIGTERM, SIGKILL after stopGraceMs),
   * deletes its data directory if asked, and starts it again with the same
   * flags on the address it had, so every proxy in front of it reaches the
   * new process. Resolves with the new child. Rejects with ClusterStartError
   * if it does not start (the service then stays down) or the cluster is
   * stopping. Kills and restarts of one process run one at a time, in call
   * order; different processes' run side by side. An etcd
   * member restarts with its data (wipeData is refused: a member that lost
   * its disk must be removed from the cluster and added again).
   */
  restart(service: RestartableProcess, options?: RestartOptions): Promise<ReadyChild>;
  restart(member: EtcdMemberName): Promise<void>;
  /** The pid of a target's current process (SIGSTOP, SIGCONT: the chaos suite's pause). */
  pidOf(target: ClusterTarget): number;
  /**
   * The replicas whose health says fencing.v1.Coordinator is SERVING, asked
   * on their own addresses (not through a proxy): the leader, and under H2
   * nobody else. A replica that does not answer within `timeoutMs` is not serving.
   */
  serving(timeoutMs?: number): Promise<ReplicaName[]>;
  /** Stops the coordinator (or the replicas), the sink, the proxy, then the etcd it started (or removes its proxies from an external Toxiproxy); `clean` is false if a child had to be killed or exited non-zero (but for one kill() ended). Idempotent; waits for a kill or restart under way. */
  stop(): Promise<{ clean: boolean }>;
}

/** Where a cluster's coordinator finds the sink and its credentials. */
export interface CoordinatorWiring {
  /** HOST:PORT it serves on; port 0 picks a free one. */
  readonly listen: string;
  /** Its own data directory. */
  readonly data: string;
  /**
   * The `--sink` value of each sink, as this coordinator dials it (a
   * proxy's listen): HOST:PORT for the only one, NAME=HOST:PORT for each of
   * several (sinkFlagValues).
   */
  readonly sinks: readonly string[];
  /** The cluster's credentials (the coordinator's token for the sink, and whom it serves), or null when insecure. */
  readonly credentials: ClusterCredentials | null;
}

/** The `fencer coordinator` arguments (after the subcommand) of a coordinator wired into a cluster. */
export function coordinatorArgs(wiring: CoordinatorWiring): string[] {
  const { credentials } = wiring;
  return [
    '--listen',
    wiring.listen,
    '--data',
    wiring.data,
    ...wiring.sinks.flatMap((sink) => ['--sink', sink]),
    ...(credentials
      ? ['--sink-token-file', credentials.sinkTokenFile, '--credentials', credentials.credentialsFile]
      : ['--insecure']),
  ];
}

/** A child of the cluster did not start; the message carries its own reason and log path. */
export class ClusterStartError extends Error {
  override name = 'ClusterStartError';
}

/**
 * Prepares `options.data` (creating it and, unless insecure, the
 * credentials), starts the sink, then the coordinator wired to it; with
 * `replicas`, first the etcd (unless given), then each replica in turn.
 * Throws ConfigError for an unusable data directory or listen address, and
 * ClusterStartError when a child does not start or there is no etcd to
 * start; either way nothing it started is left running.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const data = resolve(options.data);
  const { replicas: replicaOptions } = options;
  const sinkCount = options.sinks ?? 1;
  const sinkNames = Array.from({ length: sinkCount }, (_, index) => sinkName(index + 1, sinkCount));
  // The one coordinator, or the replicas' names in start order.
  const coordinators: readonly ('coordinator' | ReplicaName)[] = replicaOptions
    ? Array.from({ length: replicaOptions.count }, (_, index) => replicaName(index + 1))
    : ['coordinator'];
  // Two children on one fixed port would fail only once the second starts.
  const listens = [
    ...sinkNames.map((name, index) => [name, sinkListen(options.sinkListen, index + 1, sinkCount)] as const),
    ...coordinators.map(
      (name, index) =>
        [
          name,
          name === 'coordinator' ? options.coordinatorListen : replicaListen(options.coordinatorListen, index + 1),
        ] as const,
    ),
  ];
  for (const [index, [name, listen]] of listens.entries()) {
    const other = listens.slice(0, index).find(([, earlier]) => earlier === listen);
    if (other && !listen.endsWith(':0'))
      throw new ConfigError(
        `the ${other[0]} and the ${name} would both listen on ${listen}: give them other addresses`,
      );
  }
  // Before anything starts, so there is nothing to stop.
  if (replicaOptions && replicaOptions.etcd === undefined && findEtcd() === undefined)
    throw new ClusterStartError(
      "no etcd on PATH to start the replicas' etcd from: install etcd (Debian: etcd-server), or name a running one (--etcd HOST:PORT,...)",
    );
  try {
    mkdirSync(join(data, 'logs'), { recursive: true });
  } catch (error) {
    throw new ConfigError(
      `cannot use ${data} as the data directory: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const credentials = options.insecure ? null : ensureCredentials(data, options.workers);
  const logOf = (name: string) => join(data, 'logs', `${name}.log`);
  const logs = { toxiproxy: logOf('toxiproxy'), sink: logOf(sinkNames[0]!), coordinator: logOf(coordinators[0]!) };
  const proxies: Proxy[] = [];
  // Each process's current child, and its arguments for a given listen
  // address (a restart reuses them on the address the child had), in start order.
  const running = new Map<ProcessName, { child: ReadyChild; args: (listen: string) => string[] }>();
  // Exits this module caused on purpose (kill, restart): no news for childExited.
  const expectedExits = new WeakSet<ReadyChild>();
  let etcdCluster: EtcdCluster | undefined;
  let stopping: Promise<{ clean: boolean }> | undefined;
  // Each process's kill or restart under way, so a later one waits for it.
  const changes = new Map<string, Promise<unknown>>();
  let reportExit!: (exit: ChildExit) => void;
  const childExited = new Promise<ChildExit>((resolve) => (reportExit = resolve));

  /**
   * Runs the kills and restarts of one process one at a time, so it is never
   * started twice. Different processes' run side by side: a replica's restart
   * waits for etcd to answer, so it must not hold up the restart of the etcd
   * members it waits for.
   */
  const serially = <T>(target: ClusterTarget, step: () => Promise<T>): Promise<T> => {
    const key = nameOf(target);
    const result = (changes.get(key) ?? Promise.resolve()).then(step);
    changes.set(
      key,
      result.catch(() => undefined),
    );
    return result;
  };

  const stop = () =>
    (stopping ??= (async () => {
      // A restart under way finishes first, so its new child is stopped too.
      await Promise.all(changes.values());
      let clean = true;
      // Coordinators first: they depend on the sink, not the other way round.
      for (const { child } of [...running.values()].reverse()) {
        const { code } = await stopChild(child, options.stopGraceMs);
        // A child kill() ended and nobody restarted went as it was asked to.
        if (code !== 0 && !expectedExits.has(child)) clean = false;
      }
      // etcd last: the replicas talk to it until they are gone.
      await etcdCluster?.stop();
      // Proxies in someone else's Toxiproxy would outlive us, pointing nowhere.
      if (options.toxiproxyUrl !== undefined) await Promise.allSettled(proxies.map((proxy) => proxy.remove()));
      return { clean };
    })());

  const start = async (name: ProcessName, listen: string, args: (listen: string) => string[]): Promise<ReadyChild> => {
    const service = serviceOf(name);
    const script = service === 'toxiproxy' ? undefined : options.binaries?.[service];
    const env = service === 'toxiproxy' ? undefined : options.env?.[service];
    const log = logOf(name);
    // A replica waits for etcd at start (a restart while etcd has no quorum), up to its --etcd-wait-ms.
    const readyTimeoutMs = replicaOptions && service === 'coordinator' ? REPLICA_READY_MS : undefined;
    const child = await spawnLogged(name, [service, ...args(listen)], log, options.signal, {
      ...(script === undefined ? {} : { script }),
      ...(env === undefined ? {} : { env }),
      ...(readyTimeoutMs === undefined ? {} : { readyTimeoutMs }),
    });
    running.set(name, { child, args });
    void child.exited.then(({ code, signal }) => {
      if (!stopping && !expectedExits.has(child)) reportExit({ service: name, code, signal, log });
    });
    return child;
  };

  /** The process a target names: with replicas, 'coordinator' is coordinator-1; with several sinks, 'sink' is sink-1. */
  const nameOf = (target: ClusterTarget): string =>
    target === 'coordinator' ? coordinators[0]! : target === 'sink' ? sinkNames[0]! : target;
  const processOf = (target: RestartableProcess): ProcessName => {
    const name = nameOf(target) as ProcessName;
    if (!running.has(name)) throw new RangeError(`the cluster has no ${target}`);
    return name;
  };
  const current = (target: RestartableProcess): ReadyChild => running.get(processOf(target))!.child;
  const memberOf = (target: ClusterTarget): EtcdMember | undefined => {
    if (!target.startsWith('etcd-')) return undefined;
    const member = etcdCluster?.members.find(({ name }) => name === target);
    if (!member) throw new RangeError(`the cluster started no etcd member ${target}`);
    return member;
  };

  const kill = (target: ClusterTarget) =>
    serially(target, async () => {
      const member = memberOf(target);
      if (member) {
        await member.kill('SIGKILL');
        return { code: null, signal: 'SIGKILL' as const };
      }
      const child = current(target as RestartableProcess);
      expectedExits.add(child);
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
      return child.exited;
    });

  const restart = ((target: ClusterTarget, restartOptions: RestartOptions = {}) =>
    serially(target, async () => {
      if (stopping) throw new ClusterStartError(`cannot restart the ${target}: the cluster is stopping`);
      const member = memberOf(target);
      if (member) {
        if (restartOptions.wipeData)
          throw new RangeError(`${target}: an etcd member cannot restart with its data wiped`);
        return member.restart();
      }
      const name = processOf(target as RestartableProcess);
      const { child, args } = running.get(name)!;
      expectedExits.add(child);
      await stopChild(child, options.stopGraceMs);
      if (restartOptions.wipeData) rmSync(join(data, name), { recursive: true, force: true });
      // The address it had, not the one it was first given: port 0 would pick a new port.
      return start(name, child.ready.address, args);
    })) as Cluster['restart'];

  const pidOf = (target: ClusterTarget): number => {
    const pid = memberOf(target)?.pid ?? current(target as RestartableProcess).child.pid;
    if (pid === undefined) throw new Error(`the ${target} has no pid: it never started`);
    return pid;
  };

  // Every proxy listens on the coordinator's host; port 0 picks a free port.
  const proxyListen = joinHostPort(splitHostPort(options.coordinatorListen).host, 0);
  /** Creates (or replaces) the proxy `name` in front of `upstream`. */
  const createProxy = async (toxiproxy: Toxiproxy, url: string, name: string, upstream: string): Promise<Proxy> => {
    try {
      const created = await toxiproxy.populate([{ name, listen: proxyListen, upstream, enabled: true }]);
      const proxy = created[name];
      if (!proxy) throw new ClusterStartError(`Toxiproxy did not create the proxy ${name}`);
      proxies.push(proxy);
      return proxy;
    } catch (error) {
      return toxiproxyFailure(url)(error);
    }
  };
  const proxyNames = Object.fromEntries(
    Object.entries(LINK_PROXY_NAMES).map(([link, name]) => [link, (options.proxyPrefix ?? '') + name]),
  ) as Record<ClusterLink, string>;

  const authArgs = credentials ? ['--credentials', credentials.credentialsFile] : ['--insecure'];
  try {
    const proxyChild =
      options.toxiproxyUrl === undefined
        ? await start('toxiproxy', proxyListen, (listen) => ['--listen', listen])
        : null;
    const toxiproxyUrl = options.toxiproxyUrl ?? `http://${proxyChild!.ready.address}`;
    const toxiproxy = new Toxiproxy(toxiproxyUrl);
    /** Creates one link's proxy in front of `upstream`; resolves with the address it listens on. */
    const link = async (name: string, upstream: string): Promise<string> =>
      (await createProxy(toxiproxy, toxiproxyUrl, name, upstream)).listen;

    if (replicaOptions) {
      etcdCluster = replicaOptions.etcd
        ? undefined
        : await startEtcdCluster({ members: 3, dataDir: join(data, 'etcd'), logDir: join(data, 'logs') });
    }
    const etcdEndpoints = replicaOptions?.etcd ?? etcdCluster?.endpoints ?? [];

    const sinkChildren: ReadyChild[] = [];
    for (const [index, name] of sinkNames.entries()) {
      const listen = sinkListen(options.sinkListen, index + 1, sinkCount);
      sinkChildren.push(
        await start(name, listen, (listen) => ['--listen', listen, '--data', join(data, name), ...authArgs]),
      );
    }
    /** This coordinator's proxies to every sink, named `names` in sink order; resolves with its --sink values and the addresses. */
    const sinkLinks = async (names: readonly string[]) => {
      const addresses = await Promise.all(names.map((name, index) => link(name, sinkChildren[index]!.ready.address)));
      return {
        addresses,
        flags: sinkFlagValues(addresses.map((address, index) => ({ name: sinkNames[index]!, address }))),
      };
    };

    const replicas: Replica[] = [];
    for (const [index, name] of coordinators.entries()) {
      if (name === 'coordinator') break; // no replicas: the one coordinator below
      const names = replicaProxyNames(index + 1, etcdEndpoints.length, options.proxyPrefix, sinkCount);
      const listen = replicaListen(options.coordinatorListen, index + 1);
      // Its advertised address is its workers' proxy, which must exist
      // before the replica starts; it points at the replica once it listens.
      const workersProxy = await createProxy(toxiproxy, toxiproxyUrl, names.workersToCoordinator, listen);
      const toSinks = await sinkLinks(names.coordinatorToSink);
      const links: ReplicaLinks = {
        workersToCoordinator: workersProxy.listen,
        coordinatorToSink: toSinks.addresses,
        coordinatorToEtcd: await Promise.all(
          names.coordinatorToEtcd.map((proxy, member) => link(proxy, etcdEndpoints[member]!)),
        ),
      };
      const replica = await start(name, listen, (listen) => [
        ...coordinatorArgs({ listen, data: join(data, name), sinks: toSinks.flags, credentials }),
        ...replicaStoreArgs(links.coordinatorToEtcd, links.workersToCoordinator),
        ...(options.coordinatorFlags ?? []),
      ]);
      if (workersProxy.upstream !== replica.ready.address)
        await workersProxy
          .update({ enabled: true, listen: workersProxy.listen, upstream: replica.ready.address })
          .catch(toxiproxyFailure(toxiproxyUrl));
      replicas.push({
        name,
        proxyNames: names,
        links,
        log: logOf(name),
        get child() {
          return current(name);
        },
      });
    }

    // The one coordinator's proxies to the sinks, or coordinator-1's: the sinks' own coordinatorToSink.
    let coordinatorToSinks: readonly string[];
    let workersToCoordinator: { name: string; listen: string };
    if (replicas.length > 0) {
      const first = replicas[0]!;
      coordinatorToSinks = first.links.coordinatorToSink;
      workersToCoordinator = { name: first.proxyNames.workersToCoordinator, listen: first.links.workersToCoordinator };
    } else {
      const toSinks = await sinkLinks(
        sinkNames.map((_, index) => sinkProxyNames(index + 1, sinkCount, options.proxyPrefix).coordinatorToSink),
      );
      coordinatorToSinks = toSinks.addresses;
      const coordinator = await start('coordinator', options.coordinatorListen, (listen) => [
        ...coordinatorArgs({ listen, data: join(data, 'coordinator'), sinks: toSinks.flags, credentials }),
        ...(options.coordinatorFlags ?? []),
      ]);
      workersToCoordinator = {
        name: proxyNames.workersToCoordinator,
        listen: await link(proxyNames.workersToCoordinator, coordinator.ready.address),
      };
    }
    const sinks: ClusterSink[] = [];
    for (const [index, name] of sinkNames.entries()) {
      const names = sinkProxyNames(index + 1, sinkCount, options.proxyPrefix, replicas.length > 0 ? 1 : undefined);
      sinks.push({
        name,
        proxyNames: names,
        links: {
          workersToSink: await link(names.workersToSink, sinkChildren[index]!.ready.address),
          coordinatorToSink: coordinatorToSinks[index]!,
        },
        log: logOf(name),
        get child() {
          return current(name);
        },
      });
    }
    const firstSink = sinks[0]!;
    proxyNames.workersToCoordinator = workersToCoordinator.name;
    proxyNames.workersToSink = firstSink.proxyNames.workersToSink;
    proxyNames.coordinatorToSink = firstSink.proxyNames.coordinatorToSink;
    const links: Record<ClusterLink, string> = {
      coordinatorToSink: firstSink.links.coordinatorToSink,
      workersToSink: firstSink.links.workersToSink,
      workersToCoordinator: workersToCoordinator.listen,
    };

    const serving = (timeoutMs?: number) =>
      replicasServing(
        replicas.map(({ name, child }) => ({ name, address: child.ready.address })),
        timeoutMs,
      );

    return {
      data,
      proxyNames,
      get sink() {
        return current('sink');
      },
      sinks,
      get coordinator() {
        return current('coordinator');
      },
      replicas,
      etcd: replicaOptions ? { endpoints: etcdEndpoints, members: etcdCluster?.members ?? [] } : null,
      toxiproxy: { url: toxiproxyUrl, child: proxyChild },
      links,
      credentials,
      logs,
      childExited,
      kill,
      restart,
      pidOf,
      serving,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The names of the replicas whose health says fencing.v1.Coordinator is
 * SERVING (H2: the leader, and nobody else), asked at each one's own
 * address; one that does not answer within `timeoutMs` is not serving.
 */
export async function replicasServing<Name extends string>(
  replicas: readonly { readonly name: Name; readonly address: string }[],
  timeoutMs = 2_000,
): Promise<Name[]> {
  const answers = await Promise.all(
    replicas.map(async ({ name, address }) =>
      (await healthStatus(address, SERVICE_NAMES.coordinator, timeoutMs).catch(() => 'UNREACHABLE')) === 'SERVING'
        ? name
        : undefined,
    ),
  );
  return answers.filter((name) => name !== undefined);
}

/** The processes a cluster spawns: its services, and each replica and each of several sinks by name. */
type ProcessName = ClusterService | ReplicaName | SinkName;

/** The `fencer` subcommand a process runs. */
function serviceOf(name: ProcessName): ClusterService {
  if (name.startsWith('coordinator')) return 'coordinator';
  if (name.startsWith('sink')) return 'sink';
  return name as ClusterService;
}

/** How spawnLogged starts a child, beyond its arguments. */
export interface SpawnLoggedOptions {
  /** Runs instead of fencer. */
  script?: string;
  /** Added to its environment. */
  env?: NodeJS.ProcessEnv;
  /** How long it may take to be ready (spawnReady's default otherwise). */
  readyTimeoutMs?: number;
}

/**
 * Starts `fencer <args>` with its stderr appended to `log`, and resolves
 * once it is ready. A child that does not start is a ClusterStartError
 * naming it (`what`) with its own last log line; aborting `signal` first
 * rejects with the signal's reason.
 */
export async function spawnLogged(
  what: string,
  args: readonly string[],
  log: string,
  signal?: AbortSignal,
  { script = fencerBin(), env, readyTimeoutMs }: SpawnLoggedOptions = {},
): Promise<ReadyChild> {
  const logFd = openSync(log, 'a');
  try {
    return await spawnReady(script, args, {
      stderrFd: logFd,
      ...(signal ? { signal } : {}),
      ...(env ? { env } : {}),
      ...(readyTimeoutMs === undefined ? {} : { timeoutMs: readyTimeoutMs }),
    });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    // The child's own one-line reason is the last line of its log.
    const reason = lastLine(log) ?? (error as Error).message.split('\n')[0];
    throw new ClusterStartError(`the ${what} did not start: ${reason} (log: ${log})`);
  } finally {
    closeSync(logFd); // the child has its own copy
  }
}

/** Turns a failed Toxiproxy API call into a ClusterStartError naming the API. */
function toxiproxyFailure(url: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof ClusterStartError) throw error;
    throw new ClusterStartError(
      `cannot create the cluster's proxies in Toxiproxy at ${url}: ${(error as Error).message}`,
    );
  };
}

/** The last non-empty line of a file, if any. */
function lastLine(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').at(-1) || undefined;
  } catch {
    return undefined;
  }
}
