// Coordinator replicas on etcd (H) as a cluster runs them: their names, the
// address each listens on, the Toxiproxy proxies on each replica's links,
// and the `fencer coordinator` flags that put a replica on etcd. Pure
// functions; startCluster does the starting.
import { listenUp } from './ports.js';
import { sinkProxyNames } from './sinks.js';

/** A coordinator replica of a cluster: coordinator-1, coordinator-2... (what kill, restart and nemeses address). */
export type ReplicaName = `coordinator-${number}`;

/** An etcd member a cluster started itself: etcd-1, etcd-2, etcd-3 (startEtcdCluster's names). */
export type EtcdMemberName = `etcd-${number}`;

/** The links of one replica, each through its own proxy. */
export interface ReplicaLinks {
  /** Workers to this replica: the address it advertises as leader (H2, H7), so workers it redirects stay behind Toxiproxy. */
  readonly workersToCoordinator: string;
  /** This replica to each sink, in sink order (its fence calls, L3; P3 with several). */
  readonly coordinatorToSink: readonly string[];
  /** This replica to each etcd endpoint, in endpoint order: all of them cut = this replica cut from etcd. */
  readonly coordinatorToEtcd: readonly string[];
}

/** The replica numbered `index` (from 1). */
export function replicaName(index: number): ReplicaName {
  return `coordinator-${index}`;
}

/**
 * The proxy names of replica `index` (from 1) in the Toxiproxy API, for
 * `etcdEndpoints` endpoints and `sinks` sinks: workers_to_coordinator_1,
 * coordinator_1_to_sink (coordinator_1_to_sink_2... with several sinks),
 * coordinator_1_to_etcd_1...: the single coordinator's names (LINK_PROXY_NAMES)
 * with the replica's number where the coordinator is named. One proxy per
 * etcd endpoint, not one for all: a killed etcd member then takes down
 * only its own proxies, and the replica's client fails over to the others.
 */
export function replicaProxyNames(index: number, etcdEndpoints: number, prefix = '', sinks = 1): ReplicaLinks {
  return {
    workersToCoordinator: `${prefix}workers_to_coordinator_${index}`,
    coordinatorToSink: Array.from(
      { length: sinks },
      (_, sink) => sinkProxyNames(sink + 1, sinks, prefix, index).coordinatorToSink,
    ),
    coordinatorToEtcd: Array.from(
      { length: etcdEndpoints },
      (_, member) => `${prefix}coordinator_${index}_to_etcd_${member + 1}`,
    ),
  };
}

/** Where replica `index` (from 1) listens, given the cluster's coordinator address (see listenUp). */
export function replicaListen(coordinatorListen: string, index: number): string {
  return listenUp(coordinatorListen, index, `coordinator replica ${index}`);
}

/**
 * The `fencer coordinator` flags of a replica on etcd (H1, H2): its store,
 * the etcd endpoints as it dials them, and the address it tells standbys'
 * callers to go to.
 */
export function replicaStoreArgs(etcd: readonly string[], advertise: string): string[] {
  return [
    '--store',
    'etcd',
    '--etcd',
    etcd.join(','),
    '--advertise',
    advertise,
    '--etcd-wait-ms',
    String(REPLICA_ETCD_WAIT_MS),
  ];
}

/**
 * How long a cluster's replica waits for etcd at start: a fault may restart
 * it while another keeps etcd without a quorum, and it must come up once
 * the quorum is back, as a running replica would (H6).
 */
export const REPLICA_ETCD_WAIT_MS = 60_000;
/** How long a cluster's replica may take to be ready: its wait for etcd, then its start. */
export const REPLICA_READY_MS = REPLICA_ETCD_WAIT_MS + 15_000;
