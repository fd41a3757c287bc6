// `fencer cluster`: the sink and the coordinator as separate processes (the
// supervisor's startCluster), with this command's own lifecycle around it:
// the ready line, Ctrl-C, and exit statuses. The cluster never outlives a
// child, nor leaves one behind.
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { configuredCommand, hostPort, positiveInteger, whenParentGone } from '@fencer/server-kit';
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
    ],
    (options: {
      data: string;
      sinkListen: string;
      coordinatorListen: string;
      insecure?: boolean;
      stopGraceMs: number;
      toxiproxy?: string;
    }): ClusterOptions => ({
      data: options.data,
      sinkListen: options.sinkListen,
      coordinatorListen: options.coordinatorListen,
      insecure: options.insecure === true,
      stopGraceMs: options.stopGraceMs,
      ...(options.toxiproxy === undefined ? {} : { toxiproxyUrl: options.toxiproxy }),
    }),
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
    for (const service of cluster ? [cluster.sink, cluster.coordinator] : []) service.child.kill('SIGHUP');
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

  const { data, credentials, logs, links, toxiproxy } = running;
  const addresses = { sink: running.sink.ready.address, coordinator: running.coordinator.ready.address };
  // The pids let tools (and tests) signal one child: SIGSTOP it, or kill it.
  const pids = {
    sink: running.sink.child.pid,
    coordinator: running.coordinator.child.pid,
    toxiproxy: toxiproxy.child?.child.pid,
  };
  process.stdout.write(
    JSON.stringify({
      event: 'ready',
      service: 'cluster',
      address: addresses.coordinator,
      ...addresses,
      links,
      toxiproxy: toxiproxy.url,
      pids,
    }) + '\n',
  );
  process.stdout.write(
    [
      '',
      `  sink         ${addresses.sink}   workers via proxy ${links.workersToSink}   data ${join(data, 'sink')}, log ${logs.sink}`,
      `  coordinator  ${addresses.coordinator}   workers via proxy ${links.workersToCoordinator}   reaches the sink via ${links.coordinatorToSink}   data ${join(data, 'coordinator')}, log ${logs.coordinator}`,
      `  toxiproxy    ${toxiproxy.url}   proxies ${Object.values(running.proxyNames).join(', ')}${toxiproxy.child ? `, log ${logs.toxiproxy}` : ''}`,
      credentials
        ? `  credentials  ${credentials.credentialsFile}   (workers: worker-a, worker-b; send "authorization: Bearer <token>")`
        : '  credentials  none (--insecure)',
      '',
      'Both services serve reflection, so any gRPC client can explore them; faults go in through the Toxiproxy API. Ctrl-C stops all.',
      '',
    ].join('\n'),
  );
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
