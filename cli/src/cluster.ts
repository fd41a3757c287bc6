// `fencer cluster`: the sink and the coordinator as separate processes (the
// supervisor's startCluster), or with --replicas N coordinator replicas on
// etcd (H), with this command's own lifecycle around it:
// the ready line, Ctrl-C, and exit statuses. The cluster never outlives a
// child, nor leaves one behind.
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  ConfigError,
  configuredCommand,
  hostPort,
  hostPortList,
  positiveInteger,
  whenParentGone,
} from '@fencer/server-kit';
import { ClusterStartError, startCluster, type Cluster, type ClusterOptions } from '@fencer/supervisor';

/** `fencer cluster`: the sink and the coordinator as supervised child processes. */
export function clusterCommand(): Command {
  return configuredCommand(
    new Command('cluster').description(
      'run a sink and a coordinator as separate processes, with generated credentials; Ctrl-C stops both',
    ),
    [
      new Option('--data <dir>', 'data directory: sink/, coordinator/, logs/, credentials.json')
        .default('./data')
        .env('FENCER_CLUSTER_DATA'),
      new Option('--sink-listen <host:port>', 'sink address')
        .default('127.0.0.1:50051')
        .argParser(hostPort)
        .env('FENCER_CLUSTER_SINK_LISTEN'),
      new Option('--coordinator-listen <host:port>', 'coordinator address')
        .default('127.0.0.1:50052')
        .argParser(hostPort)
        .env('FENCER_CLUSTER_COORDINATOR_LISTEN'),
      new Option('--insecure', 'no credentials at all (local experiments only)').env('FENCER_CLUSTER_INSECURE'),
      new Option('--stop-grace-ms <n>', 'how long each child may take to stop before it is killed')
        .default(10_000)
        .argParser(positiveInteger)
        .env('FENCER_CLUSTER_STOP_GRACE_MS'),
      new Option(
        '--toxiproxy <url>',
        'create the proxies in this running Toxiproxy (http://HOST:PORT) instead of starting one',
      )
        .argParser(toxiproxyUrl)
        .env('TOXIPROXY_URL'),
      new Option(
        '--replicas <n>',
        'run N coordinator replicas on etcd (H) instead of one coordinator on LevelDB, listening from --coordinator-listen up',
      )
        .argParser(positiveInteger)
        .env('FENCER_CLUSTER_REPLICAS'),
      new Option(
        '--etcd <host:port,...>',
        "the replicas' etcd; without it the cluster starts a 3-member etcd on loopback from the etcd on PATH",
      )
        .argParser(hostPortList)
        .env('FENCER_CLUSTER_ETCD'),
    ],
    (options: {
      data: string;
      sinkListen: string;
      coordinatorListen: string;
      insecure?: boolean;
      stopGraceMs: number;
      toxiproxy?: string;
      replicas?: number;
      etcd?: readonly string[];
    }): ClusterOptions => {
      if (options.etcd !== undefined && options.replicas === undefined)
        throw new ConfigError("--etcd is the replicas' etcd: give --replicas N too");
      return {
        data: options.data,
        sinkListen: options.sinkListen,
        coordinatorListen: options.coordinatorListen,
        insecure: options.insecure === true,
        stopGraceMs: options.stopGraceMs,
        ...(options.toxiproxy === undefined ? {} : { toxiproxyUrl: options.toxiproxy }),
        ...(options.replicas === undefined
          ? {}
          : { replicas: { count: options.replicas, ...(options.etcd ? { etcd: options.etcd } : {}) } }),
      };
    },
    runCluster,
  );
}

/**
 * Exits 0 after a clean stop on SIGINT/SIGTERM; exits 1 when a child cannot
 * start, dies on its own, or has to be killed. SIGHUP is passed on to the
 * sink and the coordinator, which reload the shared credentials file.
 */
async function runCluster(options: ClusterOptions): Promise<void> {
  const starting = new AbortController();
  let cluster: Cluster | undefined;
  let stoppingWith: number | undefined;
  const stop = async (code: number) => {
    if (stoppingWith !== undefined) return;
    stoppingWith = code;
    starting.abort();
    if (!cluster) return; // startCluster ends the children still starting, then rejects
    // (After Ctrl-C the children got SIGINT from the terminal already; they
    // ignore this SIGTERM while stopping and finish cleanly.)
    const { clean } = await cluster.stop();
    process.exit(code === 0 && !clean ? 1 : code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  // Without a handler SIGHUP would end the cluster; while it starts, the
  // children still read the file themselves.
  process.on('SIGHUP', () => {
    if (!cluster) return;
    const coordinators =
      cluster.replicas.length > 0 ? cluster.replicas.map(({ child }) => child) : [cluster.coordinator];
    for (const service of [cluster.sink, ...coordinators]) service.child.kill('SIGHUP');
  });
  whenParentGone(() => void stop(0));

  try {
    cluster = await startCluster({ ...options, signal: starting.signal });
  } catch (error) {
    if (starting.signal.aborted) process.exit(stoppingWith ?? 0);
    if (!(error instanceof ClusterStartError)) throw error;
    process.stderr.write(`fencer cluster: ${error.message}\n`);
    process.exit(1);
  }
  const running = cluster;
  void running.childExited.then(({ service, code, signal, log }) => {
    process.stderr.write(
      `fencer cluster: the ${service} exited (code ${code}, signal ${signal}); see ${log}. Stopping.\n`,
    );
    void stop(1);
  });

  process.stdout.write(running.replicas.length > 0 ? replicasReady(running) : singleReady(running));
}

/** The ready line and the addresses of a cluster with one coordinator. */
function singleReady(running: Cluster): string {
  const { data, logs, links, toxiproxy } = running;
  const addresses = { sink: running.sink.ready.address, coordinator: running.coordinator.ready.address };
  // The pids let tools (and tests) signal one child: SIGSTOP it, or kill it.
  const pids = {
    sink: running.sink.child.pid,
    coordinator: running.coordinator.child.pid,
    toxiproxy: toxiproxy.child?.child.pid,
  };
  return [
    JSON.stringify({
      event: 'ready',
      service: 'cluster',
      address: addresses.coordinator,
      ...addresses,
      links,
      toxiproxy: toxiproxy.url,
      pids,
    }),
    '',
    `  sink         ${addresses.sink}   workers via proxy ${links.workersToSink}   data ${join(data, 'sink')}, log ${logs.sink}`,
    `  coordinator  ${addresses.coordinator}   workers via proxy ${links.workersToCoordinator}   reaches the sink via ${links.coordinatorToSink}   data ${join(data, 'coordinator')}, log ${logs.coordinator}`,
    `  toxiproxy    ${toxiproxy.url}   proxies ${Object.values(running.proxyNames).join(', ')}${toxiproxy.child ? `, log ${logs.toxiproxy}` : ''}`,
    credentialsLine(running),
    '',
    'Both services serve reflection, so any gRPC client can explore them; faults go in through the Toxiproxy API. Ctrl-C stops all.',
    '',
  ].join('\n');
}

/**
 * The ready line and the addresses of a cluster of replicas: every replica
 * with its links, and the etcd. `address` and `coordinator` list the
 * replicas' own addresses, `links.workersToCoordinator` their workers'
 * proxies (each replica's --advertise): either list is a `--coordinator`
 * value for a worker (H7).
 */
function replicasReady(running: Cluster): string {
  const { data, logs, toxiproxy, replicas } = running;
  const etcd = running.etcd!;
  const coordinators = replicas.map((replica) => replica.child.ready.address).join(',');
  const workersToCoordinator = replicas.map((replica) => replica.links.workersToCoordinator).join(',');
  const pids = Object.fromEntries([
    ['sink', running.sink.child.pid],
    ...replicas.map((replica) => [replica.name, replica.child.child.pid]),
    ...etcd.members.map((member) => [member.name, member.pid]),
    ['toxiproxy', toxiproxy.child?.child.pid],
  ]) as Record<string, number | undefined>;
  const ready = {
    event: 'ready',
    service: 'cluster',
    address: coordinators,
    sink: running.sink.ready.address,
    coordinator: coordinators,
    links: { workersToSink: running.links.workersToSink, workersToCoordinator },
    replicas: replicas.map(({ name, child, links, proxyNames }) => ({
      name,
      address: child.ready.address,
      links,
      proxyNames,
    })),
    etcd: { endpoints: etcd.endpoints, started: etcd.members.length > 0 },
    toxiproxy: toxiproxy.url,
    pids,
  };
  const width = Math.max(...replicas.map(({ name }) => name.length), 'credentials'.length) + 1;
  const row = (what: string, text: string) => `  ${what.padEnd(width)} ${text}`;
  const proxies = [
    running.proxyNames.workersToSink,
    ...replicas.flatMap(({ proxyNames }) => [
      proxyNames.workersToCoordinator,
      proxyNames.coordinatorToSink,
      ...proxyNames.coordinatorToEtcd,
    ]),
  ];
  return [
    JSON.stringify(ready),
    '',
    row(
      'sink',
      `${ready.sink}   workers via proxy ${running.links.workersToSink}   data ${join(data, 'sink')}, log ${logs.sink}`,
    ),
    ...replicas.map(({ name, child, links, log }) =>
      row(
        name,
        `${child.ready.address}   workers via proxy ${links.workersToCoordinator} (its --advertise)   reaches the sink via ${links.coordinatorToSink}, etcd via ${links.coordinatorToEtcd.join(',')}   log ${log}`,
      ),
    ),
    etcd.members.length > 0
      ? row('etcd', etcd.members.map((member) => `${member.name} ${member.endpoint} (log ${member.log})`).join(', '))
      : row('etcd', `${etcd.endpoints.join(',')} (given)`),
    row(
      'toxiproxy',
      `${toxiproxy.url}   proxies ${proxies.join(', ')}${toxiproxy.child ? `, log ${logs.toxiproxy}` : ''}`,
    ),
    credentialsLine(running, width),
    '',
    `One replica leads (its health says fencing.v1.Coordinator SERVING); the others answer NOT_LEADER naming it. Workers: --coordinator ${workersToCoordinator}. Ctrl-C stops all.`,
    '',
  ].join('\n');
}

/** The credentials row of the printed addresses. */
function credentialsLine({ credentials }: Cluster, width = 'credentials'.length + 1): string {
  return credentials
    ? `  ${'credentials'.padEnd(width)} ${credentials.credentialsFile}   (workers: worker-a, worker-b; send "authorization: Bearer <token>")`
    : `  ${'credentials'.padEnd(width)} none (--insecure)`;
}

/** Commander parser for a Toxiproxy API URL: http://HOST:PORT. */
function toxiproxyUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`expected http://HOST:PORT, got "${value}"`);
  }
  if (url.protocol !== 'http:' || !url.port)
    throw new InvalidArgumentError(`expected http://HOST:PORT, got "${value}"`);
  return `http://${url.host}`;
}
