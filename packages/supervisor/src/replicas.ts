// Coordinator replicas on etcd (H) as a cluster runs them: their names, the
// address each listens on, the Toxiproxy proxies on each replica's links,
// and the `fencer coordinator` flags that put a replica on etcd. Pure
// functions; startCluster does the starting.
import { ConfigError, joinHostPort, splitHostPort } from '@fencer/server-kit';

/** A coordinator replica of a cluster: coordinator-1, coordinator-2... (what kill, restart and nemeses address). */
export type ReplicaName = `coordinator-${number}`;

/** An etcd member a cluster started itself: etcd-1, etcd-2, etcd-3 (startEtcdCluster's names). */
export type EtcdMemberName = `etcd-${number}`;

/** The links of one replica, each through its own proxy. */
export interface ReplicaLinks {
  /** Workers to this replica: the address it advertises as leader (H2, H7), so workers it redirects stay behind Toxiproxy. */
  readonly workersToCoordinator: string;
  /** This replica to the sink (its fence calls, L3). */
  readonly coordinatorToSink: string;
  /** This replica to each etcd endpoint, in endpoint order: all of them cut = this replica cut from etcd. */
  readonly coordinatorToEtcd: readonly string[];
}

/** The replica numbered `index` (from 1). */
export function replicaName(index: number): ReplicaName {
  return `coordinator-${index}`;
}

/**
 * The proxy names of replica `index` (from 1) in the Toxiproxy API, for
 * `etcdEndpoints` endpoints: workers_to_coordinator_1, coordinator_1_to_sink,
 * coordinator_1_to_etcd_1...: the single coordinator's names (LINK_PROXY_NAMES)
 * with the replica's number where the coordinator is named. One proxy per
 * etcd endpoint, not one for all: a killed etcd member then takes down
 * only its own proxies, and the replica's client fails over to the others.
 */
export function replicaProxyNames(index: number, etcdEndpoints: number, prefix = ''): ReplicaLinks {
  return {
    workersToCoordinator: `${prefix}workers_to_coordinator_${index}`,
    coordinatorToSink: `${prefix}coordinator_${index}_to_sink`,
    coordinatorToEtcd: Array.from(
      { length: etcdEndpoints },
      (_, member) => `${prefix}coordinator_${index}_to_etcd_${member + 1}`,
    ),
  };
}

/**
 * Where replica `index` (from 1) listens, given the cluster's coordinator
 * address: the next ports up from a fixed one (50052, 50053...), or port 0
 * for each when the cluster's is 0. Throws ConfigError past port 65535.
 */
export function replicaListen(coordinatorListen: string, index: number): string {
  const { host, port } = splitHostPort(coordinatorListen);
  if (port === 0) return coordinatorListen;
  const next = port + index - 1;
  if (next > 65_535)
    throw new ConfigError(`coordinator replica ${index} would listen on port ${next}, past 65535: lower the port`);
  return joinHostPort(host, next);
}

/**
 * The `fencer coordinator` flags of a replica on etcd (H1, H2): its store,
 * the etcd endpoints as it dials them, and the address it tells standbys'
 * callers to go to.
 */
export function replicaStoreArgs(etcd: readonly string[], advertise: string): string[] {
  return ['--store', 'etcd', '--etcd', etcd.join(','), '--advertise', advertise];
}
