// `fencer demo` (what `npm start` runs): starts a secured cluster behind
// its fault proxy and two workers, tells the story, prints the table of
// checks, and exits 0 only if every check held. Everything it started is
// stopped at the end, on Ctrl-C, and when its own parent goes away;
// `--keep` leaves the cluster running for exploring.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { Toxiproxy } from 'toxiproxy-node-client';
import { CoordinatorConnection, SinkConnection } from '@fencer/client';
import { configuredCommand, positiveInteger, whenParentGone } from '@fencer/cli-kit';
import {
  ClusterStartError,
  credentialToken,
  startCluster,
  startWorker,
  type Cluster,
  type WorkerProcess,
} from '@fencer/supervisor';
import { Narrator } from './narrator.js';
import { tellStory } from './story.js';

/** What `fencer demo` runs with. */
export interface DemoConfig {
  /** Data directory; absent: a fresh temporary one, removed afterwards unless kept. */
  readonly data?: string;
  readonly keep: boolean;
  /** Worker A's lease: the pause must outlast it. */
  readonly ttlMs: number;
}

/** `fencer demo`. */
export function demoCommand(): Command {
  return configuredCommand(
    new Command('demo').description(
      'the takeover story across real processes (sink, coordinator, fault proxy, two workers), narrated and checked',
    ),
    [
      new Option('--data <dir>', 'data directory (default: a fresh temporary one)').env('FENCER_DEMO_DATA'),
      new Option('--keep', 'leave the cluster running afterwards, until Ctrl-C'),
      new Option('--ttl-ms <n>', "worker A's lease TTL; A is frozen until it expires")
        .default(1_000)
        .argParser(positiveInteger),
    ],
    (options: { data?: string; keep?: boolean; ttlMs: number }): DemoConfig =>
      Object.freeze({
        ...(options.data === undefined ? {} : { data: resolve(options.data) }),
        keep: options.keep === true,
        ttlMs: options.ttlMs,
      }),
    runDemo,
  );
}

const print = (line: string) => process.stdout.write(line + '\n');

async function runDemo(config: DemoConfig): Promise<void> {
  const data = config.data ?? mkdtempSync(join(tmpdir(), 'fencer-demo-'));
  const starting = new AbortController();
  const workers: WorkerProcess[] = [];
  const closers: { close(): void }[] = [];
  let cluster: Cluster | undefined;
  let finishing: Promise<void> | undefined;

  /** Stops the workers (a frozen one is thawed first, or it could not stop) and closes the demo's connections. */
  const stopWorkers = async () => {
    for (const worker of workers) worker.child.kill('SIGCONT');
    await Promise.all(workers.map((worker) => worker.stop(2_000)));
    for (const closer of closers) closer.close();
  };
  /** Stops everything it started, then exits with `code`. */
  const finish = (code: number) =>
    (finishing ??= (async () => {
      starting.abort();
      await stopWorkers();
      await cluster?.stop();
      if (config.data === undefined && !config.keep) rmSync(data, { recursive: true, force: true });
      process.exit(code);
    })());
  process.on('SIGINT', () => void finish(130));
  process.on('SIGTERM', () => void finish(143));
  whenParentGone(() => void finish(1));

  print('Fencer demo: a stale worker cannot overwrite a newer one, across real processes.');
  try {
    cluster = await startCluster({
      data,
      sinkListen: '127.0.0.1:0',
      coordinatorListen: '127.0.0.1:0',
      insecure: false,
      stopGraceMs: 5_000,
      signal: starting.signal,
    });
  } catch (error) {
    if (starting.signal.aborted) return;
    process.stderr.write(`fencer demo: ${error instanceof ClusterStartError ? error.message : String(error)}\n`);
    return finish(1);
  }
  const { links, credentials } = cluster;
  print(
    `   sink        pid ${cluster.sink.child.pid}, ${cluster.sink.ready.address} (workers reach it via proxy ${links.workersToSink})`,
  );
  print(
    `   coordinator pid ${cluster.coordinator.child.pid}, ${cluster.coordinator.ready.address} (workers via ${links.workersToCoordinator}, and it reaches the sink via ${links.coordinatorToSink})`,
  );
  print(`   toxiproxy   ${cluster.toxiproxy.url}, data in ${data}`);

  const tokenOf = (identity: string) => credentialToken(credentials!.credentialsFile, { identity });
  const resource = 'task-1';
  const narrator = new Narrator(print);
  let allHeld = false;
  try {
    const worker = async (owner: string, ttlMs: number) => {
      const started = await startWorker({
        coordinator: links.workersToCoordinator,
        sink: links.workersToSink,
        owner,
        tokenFile: credentials!.workerTokenFiles[owner]!,
        args: ['--commands', '--resource', resource, '--ttl-ms', String(ttlMs), '--call-timeout-ms', '500'],
      });
      workers.push(started);
      return started;
    };
    const [a, b] = await Promise.all([worker('worker-a', config.ttlMs), worker('worker-b', 10_000)]);
    const direct = (
      Connection: typeof CoordinatorConnection | typeof SinkConnection,
      address: string,
      identity: string,
    ) => {
      const connection = new Connection({ address, token: tokenOf(identity) });
      closers.push(connection);
      return connection;
    };
    await tellStory(
      {
        cluster,
        toxiproxy: new Toxiproxy(cluster.toxiproxy.url),
        a,
        b,
        admin: {
          coordinator: direct(
            CoordinatorConnection,
            cluster.coordinator.ready.address,
            'admin',
          ) as CoordinatorConnection,
          sink: direct(SinkConnection, cluster.sink.ready.address, 'admin') as SinkConnection,
        },
        inFlightFromA: direct(SinkConnection, cluster.sink.ready.address, 'worker-a') as SinkConnection,
        resource,
        ttlMsA: config.ttlMs,
      },
      narrator,
    );
    allHeld = narrator.summary();
  } catch (error) {
    if (starting.signal.aborted) return;
    print('');
    print(`The story could not go on: ${(error as Error).message}`);
    narrator.summary();
  }
  if (!config.keep) return finish(allHeld ? 0 : 1);
  await stopWorkers();
  const exitCode = allHeld ? 0 : 1;
  process.removeAllListeners('SIGINT');
  process.on('SIGINT', () => void finish(exitCode));
  print('');
  print('The cluster keeps running (--keep); Ctrl-C stops it. To explore:');
  print(
    `   sink ${cluster.sink.ready.address}, coordinator ${cluster.coordinator.ready.address}, Toxiproxy ${cluster.toxiproxy.url}`,
  );
  print(`   credentials in ${credentials!.credentialsFile}, worker tokens beside it`);
  print(
    `   grpcurl -plaintext -H "authorization: Bearer $(cat ${credentials!.workerTokenFiles['worker-a']})" -d '{"resource":"${resource}"}' ${cluster.sink.ready.address} fencing.v1.Sink/GetFence`,
  );
}
