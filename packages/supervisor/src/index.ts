// @fencer/supervisor: starting and stopping real `fencer` processes. Used by
// the CLI, the chaos suite, the bench and tests; it exits nothing and
// handles no signals itself.
export { fencerBin } from './fencer-bin.js';
export {
  spawnReady,
  stopChild,
  isProcessAlive,
  processesMentioning,
  type ReadyChild,
  type SpawnReadyOptions,
} from './spawn.js';
export {
  startCluster,
  replicasServing,
  coordinatorArgs,
  spawnLogged,
  LINK_PROXY_NAMES,
  type ClusterLink,
  ClusterStartError,
  type Cluster,
  type ClusterOptions,
  type ClusterService,
  type ClusterTarget,
  type ClusterEtcd,
  type Replica,
  type ReplicaOptions,
  type ClusterSink,
  type CoordinatorWiring,
  type RestartableService,
  type RestartableProcess,
  type RestartOptions,
  type ChildExit,
} from './cluster.js';
export {
  replicaName,
  replicaProxyNames,
  replicaListen,
  replicaStoreArgs,
  type ReplicaName,
  type ReplicaLinks,
  type EtcdMemberName,
} from './replicas.js';
export { sinkName, sinkProxyNames, sinkListen, sinkFlagValues, type SinkName, type SinkLinks } from './sinks.js';
export { healthStatus, healthCommand } from './health.js';
export { traceCommand, traceTrees, readSpanFiles } from './trace.js';
export { reflect, reflectedServices, type ReflectionResponse } from './reflection.js';
export {
  ensureCredentials,
  credentialsCommand,
  credentialToken,
  DEFAULT_WORKERS,
  type ClusterCredentials,
} from './credentials.js';
export {
  startWorker,
  type WorkerProcess,
  type WorkerProcessOptions,
  type StampedWorkerEvent,
} from './worker-process.js';
export {
  findEtcd,
  startEtcdCluster,
  etcdHosts,
  type EtcdCluster,
  type EtcdClusterOptions,
  type EtcdMember,
} from './etcd.js';
