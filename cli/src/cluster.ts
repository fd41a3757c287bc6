// `fencer cluster`: the sink and the coordinator as separate processes (the
// supervisor's startCluster), or with --replicas N coordinator replicas on
// etcd (H), and with --sinks N sinks sharded by resource (P), with this
// command's own lifecycle around it:
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
} from '@fencer/cli-kit';
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
      new Option('--sink-listen <host:port>', 'sink address (with --sinks, the first; the others on the next ports up)')
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
      new Option(
        '--sinks <n>',
        'run N sinks sharded by resource (P1), sink-1... listening from --sink-listen up; every coordinator is given all of them',
      )
        .argParser(positiveInteger)
        .env('FENCER_CLUSTER_SINKS'),
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
      sinks?: number;
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
        ...(options.sinks === undefined ? {} : { sinks: options.sinks }),
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
    for (const service of [...cluster.sinks.map(({ child }) => child), ...coordinators]) service.child.kill('SIGHUP');
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
  const sinks = sinksReady(running);
  const coordinator = running.coordinator.ready.address;
  const coordinatorToSink = running.sinks.map(({ links }) => links.coordinatorToSink).join(',');
  // The pids let tools (and tests) signal one child: SIGSTOP it, or kill it.
  const pids = { ...sinks.pids, coordinator: running.coordinator.child.pid, toxiproxy: toxiproxy.child?.child.pid };
  const width = sinks.width;
  const row = (what: string, text: string) => `  ${what.padEnd(width)} ${text}`;
  const proxies = [
    ...running.sinks.flatMap(({ proxyNames }) => [proxyNames.workersToSink, proxyNames.coordinatorToSink]),
    running.proxyNames.workersToCoordinator,
  ];
  return [
    JSON.stringify({
      event: 'ready',
      service: 'cluster',
      address: coordinator,
      sink: sinks.sink,
      coordinator,
      links: { ...links, workersToSink: sinks.workersToSink, coordinatorToSink },
      ...sinks.named,
      toxiproxy: toxiproxy.url,
      pids,
    }),
    '',
    ...sinks.rows(row),
    row(
      'coordinator',
      `${coordinator}   workers via proxy ${links.workersToCoordinator}   reaches the ${running.sinks.length > 1 ? 'sinks' : 'sink'} via ${coordinatorToSink}   data ${join(data, 'coordinator')}, log ${logs.coordinator}`,
    ),
    row(
      'toxiproxy',
      `${toxiproxy.url}   proxies ${proxies.join(', ')}${toxiproxy.child ? `, log ${logs.toxiproxy}` : ''}`,
    ),
    credentialsLine(running, width),
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
  const { logs, toxiproxy, replicas } = running;
  const etcd = running.etcd!;
  const coordinators = replicas.map((replica) => replica.child.ready.address).join(',');
  const workersToCoordinator = replicas.map((replica) => replica.links.workersToCoordinator).join(',');
  const sinks = sinksReady(running);
  const pids = Object.fromEntries([
    ...Object.entries(sinks.pids),
    ...replicas.map((replica) => [replica.name, replica.child.child.pid]),
    ...etcd.members.map((member) => [member.name, member.pid]),
    ['toxiproxy', toxiproxy.child?.child.pid],
  ]) as Record<string, number | undefined>;
  const ready = {
    event: 'ready',
    service: 'cluster',
    address: coordinators,
    sink: sinks.sink,
    coordinator: coordinators,
    links: { workersToSink: sinks.workersToSink, workersToCoordinator },
    ...sinks.named,
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
  const width = Math.max(...replicas.map(({ name }) => name.length), sinks.width - 1) + 1;
  const row = (what: string, text: string) => `  ${what.padEnd(width)} ${text}`;
  const proxies = [
    ...running.sinks.map(({ proxyNames }) => proxyNames.workersToSink),
    ...replicas.flatMap(({ proxyNames }) => [
      proxyNames.workersToCoordinator,
      ...proxyNames.coordinatorToSink,
      ...proxyNames.coordinatorToEtcd,
    ]),
  ];
  return [
    JSON.stringify(ready),
    '',
    ...sinks.rows(row),
    ...replicas.map(({ name, child, links, log }) =>
      row(
        name,
        `${child.ready.address}   workers via proxy ${links.workersToCoordinator} (its --advertise)   reaches the ${links.coordinatorToSink.length > 1 ? 'sinks' : 'sink'} via ${links.coordinatorToSink.join(',')}, etcd via ${links.coordinatorToEtcd.join(',')}   log ${log}`,
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

/**
 * The sinks' part of the ready line. `sink` and `workersToSink` list every
 * sink's address and its workers' proxy, comma-separated: either is a
 * `--sink` value for a worker (P3), as with one sink. With several, `named`
 * adds each sink by name with its links; `rows` prints a row for each.
 */
function sinksReady(running: Cluster) {
  const { sinks, data } = running;
  return {
    sink: sinks.map(({ child }) => child.ready.address).join(','),
    workersToSink: sinks.map(({ links }) => links.workersToSink).join(','),
    pids: Object.fromEntries(sinks.map(({ name, child }) => [name, child.child.pid])) as Record<
      string,
      number | undefined
    >,
    named:
      sinks.length > 1
        ? {
            sinks: sinks.map(({ name, child, links, proxyNames }) => ({
              name,
              address: child.ready.address,
              links,
              proxyNames,
            })),
          }
        : {},
    width: Math.max(...sinks.map(({ name }) => name.length), 'credentials'.length) + 1,
    rows: (row: (what: string, text: string) => string) =>
      sinks.map(({ name, child, links, log }) =>
        row(
          name,
          `${child.ready.address}   workers via proxy ${links.workersToSink}   data ${join(data, name)}, log ${log}`,
        ),
      ),
  };
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
