// The nemeses of the chaos suite: faults as objects with start() and heal()
// (fault.ts), on a cluster's links (network.ts) and processes (process.ts),
// planned by a seeded schedule (schedule.ts). nemesisFor is where a planned
// fault becomes the nemesis that carries it out.
import {
  LINK_PROXY_NAMES,
  type Cluster,
  type ClusterLink,
  type EtcdMemberName,
  type ReplicaName,
  type RestartableService,
  type SinkName,
} from '@fencer/supervisor';
import { Toxiproxy } from 'toxiproxy-node-client';
import type { Nemesis } from './fault.js';
import {
  blackhole,
  clusterLink,
  connectionReset,
  DEFAULT_FLAP,
  flap,
  isolate,
  latencySpike,
  partition,
  replyLoss,
  requestLoss,
  type FlapOptions,
  type LinkTarget,
} from './network.js';
import { clockSkew, type FaketimeClock } from './clock.js';
import { crash, pause, serviceProcess, splitBrain } from './process.js';
import { cutFromEtcd, killEtcdMajority, killEtcdMember, killLeader, pauseLeader } from './replicas.js';
import type { ScheduledFault } from './schedule.js';

export {
  NEMESIS_KINDS,
  defineNemesis,
  type FaultRecord,
  type FaultTarget,
  type Injected,
  type Nemesis,
  type NemesisKind,
} from './fault.js';
export {
  blackhole,
  clusterLink,
  connectionReset,
  DEFAULT_FLAP,
  flap,
  isolate,
  latencySpike,
  partition,
  redirect,
  replyLoss,
  requestLoss,
  type Direction,
  type FlapOptions,
  type LatencyOptions,
  type LinkTarget,
  type ResetOptions,
} from './network.js';
export { clockSkew, FaketimeClock, libfaketime, REWRITE_WINDOW_MS, type ClockRateBound } from './clock.js';
export {
  crash,
  pause,
  serviceProcess,
  splitBrain,
  startRivalCoordinator,
  type ProcessTarget,
  type RivalOptions,
} from './process.js';
export {
  cutFromEtcd,
  killEtcdMajority,
  killEtcdMember,
  killLeader,
  leaderOf,
  LEADER,
  pauseLeader,
  type ReplicaCluster,
} from './replicas.js';
export { DEFAULT_TARGETS, schedule, type ScheduledFault, type ScheduleOptions } from './schedule.js';

/** What nemesisFor needs besides the cluster. */
export interface NemesisSettings {
  /** The latency spike per direction, ms: longer than the TTL under test. */
  readonly latencyMs: number;
  /** Pids of other processes `pause` may target, by name (workers). */
  readonly pids?: Readonly<Record<string, number>>;
  /** Links beside the cluster's own that network faults may target, by proxy name (a worker's own proxies). */
  readonly links?: Readonly<Record<string, LinkTarget>>;
  /**
   * Links of a process beside the cluster's own, by process name, that
   * `isolate` cuts with them: a worker's own proxies, or the workers'
   * proxies that reach a service.
   */
  readonly linksOf?: Readonly<Record<string, readonly LinkTarget[]>>;
  /** How `flap` toggles a link; default DEFAULT_FLAP. */
  readonly flap?: FlapOptions;
  /** The fake clocks `clock-skew` may target, by process name (processes started under them). */
  readonly clocks?: Readonly<Record<string, FaketimeClock>>;
  /** The rate `clock-skew` sets: 4 is four times too fast, 0.25 four times too slow. */
  readonly clockRate?: number;
  /** Links that `split-brain` sends to its rival while it runs (some workers' proxies to the coordinator). */
  readonly rivalLinks?: readonly LinkTarget[];
}

/**
 * The nemesis a planned fault names, on `cluster`. Nothing is injected
 * until its start(); build it when the fault is due, since a pause of a
 * service takes the pid the service has now. Throws RangeError for a target
 * the kind cannot act on.
 */
export function nemesisFor(
  cluster: Cluster,
  fault: Pick<ScheduledFault, 'kind' | 'target'>,
  settings: NemesisSettings,
): Nemesis {
  const { kind, target } = fault;
  switch (kind) {
    case 'partition':
      return partition(linkNamed(cluster, target, settings));
    case 'blackhole':
      return blackhole(linkNamed(cluster, target, settings));
    case 'reply-loss':
      return replyLoss(linkNamed(cluster, target, settings));
    case 'request-loss':
      return requestLoss(linkNamed(cluster, target, settings));
    case 'flap':
      return flap(linkNamed(cluster, target, settings), settings.flap ?? DEFAULT_FLAP);
    case 'isolate':
      return isolate(target, [...serviceLinks(cluster, target), ...(settings.linksOf?.[target] ?? [])]);
    case 'latency':
      return latencySpike(linkNamed(cluster, target, settings), { latencyMs: settings.latencyMs });
    case 'reset-peer':
      return connectionReset(linkNamed(cluster, target, settings));
    case 'pause': {
      if (isService(target)) return pause(serviceProcess(cluster, target));
      const pid = settings.pids?.[target];
      if (pid === undefined) throw new RangeError(`pause: no pid for ${target}`);
      return pause({ pid, name: target });
    }
    case 'crash':
      return crash(cluster, service(kind, target), clockOf(target, settings));
    case 'crash-wipe':
      return crash(cluster, service(kind, target), { wipeData: true, ...clockOf(target, settings) });
    case 'split-brain':
      // Fresh each time: a rival resuming its data would refuse (L7) for most of a short fault.
      return splitBrain(cluster, { name: target, fresh: true, redirect: settings.rivalLinks ?? [] });
    case 'clock-skew': {
      const clock = settings.clocks?.[target];
      if (!clock) throw new RangeError(`clock-skew: ${target} runs on no fake clock`);
      if (settings.clockRate === undefined) throw new RangeError('clock-skew: no clockRate in the settings');
      return clockSkew(clock, target, settings.clockRate);
    }
    case 'kill-leader':
      return killLeader(cluster);
    case 'pause-leader':
      return pauseLeader(cluster);
    case 'cut-from-etcd':
      if (!/^coordinator-\d+$/.test(target)) throw new RangeError(`cut-from-etcd: ${target} is not a replica`);
      return cutFromEtcd(cluster, target as ReplicaName);
    case 'kill-etcd':
      if (!/^etcd-\d+$/.test(target)) throw new RangeError(`kill-etcd: ${target} is not an etcd member`);
      return killEtcdMember(cluster, target as EtcdMemberName);
    case 'kill-etcd-majority':
      return killEtcdMajority(cluster);
  }
}

/**
 * The cluster's own links that reach a service (none for a worker): a
 * sink's from the workers and from every coordinator, or the coordinator's
 * from the workers and to every sink.
 */
function serviceLinks(cluster: Cluster, target: string): LinkTarget[] {
  const toxiproxy = new Toxiproxy(cluster.toxiproxy.url);
  const fromCoordinators = (index: number) =>
    cluster.replicas.length > 0
      ? cluster.replicas.map(({ proxyNames }) => proxyNames.coordinatorToSink[index]!)
      : [cluster.sinks[index]!.proxyNames.coordinatorToSink];
  const proxies =
    target === 'coordinator'
      ? [cluster.proxyNames.workersToCoordinator, ...cluster.sinks.map((_, index) => fromCoordinators(index)[0]!)]
      : cluster.sinks.flatMap(({ name, proxyNames }, index) =>
          name === target || (target === 'sink' && index === 0)
            ? [proxyNames.workersToSink, ...fromCoordinators(index)]
            : [],
        );
  return proxies.map((proxy) => ({ toxiproxy, proxy }));
}

/** Whether `target` names a cluster service a process fault can act on: the sink or the coordinator, or one of several sinks. */
function isService(target: string): target is RestartableService | SinkName {
  return target === 'sink' || target === 'coordinator' || /^sink-\d+$/.test(target);
}

/** The link whose proxy is named `proxy`: one of settings.links, or a cluster link. */
function linkNamed(cluster: Cluster, proxy: string, settings: NemesisSettings): LinkTarget {
  const extra = settings.links?.[proxy];
  if (extra) return extra;
  const link = (Object.keys(LINK_PROXY_NAMES) as ClusterLink[]).find((name) => LINK_PROXY_NAMES[name] === proxy);
  if (!link) throw new RangeError(`no cluster link has the proxy ${proxy}`);
  return clusterLink(cluster, link);
}

/** The fake clock `target` runs on, as crash's option: a service restarted on it comes back where its model is. */
function clockOf(target: string, settings: NemesisSettings): { clock?: FaketimeClock } {
  const clock = settings.clocks?.[target];
  return clock ? { clock } : {};
}

/** `target` as a service that can crash. */
function service(kind: string, target: string): RestartableService | SinkName {
  if (!isService(target)) throw new RangeError(`${kind}: ${target} is not a service`);
  return target;
}
