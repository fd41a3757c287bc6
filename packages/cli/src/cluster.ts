// `fencer cluster`: the sink and the coordinator as separate processes on
// one machine, wired together with generated credentials, so a newcomer
// gets a working, authenticated pair with one command. (The fault proxy
// joins this line-up with its own issue.)
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { ConfigError, configuredCommand, hostPort, positiveInteger, readCredentialsFile, spawnReady, type ReadyChild } from '@fencer/server-kit';

const FENCER_BIN = fileURLToPath(new URL('../bin/fencer.js', import.meta.url));

/** Identities the generated credentials file holds; workers act as their identity (A3). */
const GENERATED_IDENTITIES = [
  { identity: 'coordinator', role: 'coordinator' },
  { identity: 'admin', role: 'admin' },
  { identity: 'worker-a', role: 'worker' },
  { identity: 'worker-b', role: 'worker' },
] as const;

/** `fencer cluster`: the sink and the coordinator as supervised child processes (see runCluster). */
export function clusterCommand(): Command {
  return configuredCommand(
    new Command('cluster').description('run a sink and a coordinator as separate processes, with generated credentials; Ctrl-C stops both'),
    [
      new Option('--data <dir>', 'data directory: sink/, coordinator/, logs/, credentials.json').default('./data').env('FENCER_CLUSTER_DATA'),
      new Option('--sink-listen <host:port>', 'sink address').default('127.0.0.1:50051').argParser(hostPort).env('FENCER_CLUSTER_SINK_LISTEN'),
      new Option('--coordinator-listen <host:port>', 'coordinator address').default('127.0.0.1:50052').argParser(hostPort).env('FENCER_CLUSTER_COORDINATOR_LISTEN'),
      new Option('--insecure', 'no credentials at all (local experiments only)').env('FENCER_CLUSTER_INSECURE'),
      new Option('--stop-grace-ms <n>', 'how long each child may take to stop before it is killed').default(10_000).argParser(positiveInteger).env('FENCER_CLUSTER_STOP_GRACE_MS'),
    ],
    prepareCluster,
    runCluster,
  );
}

interface ClusterPlan {
  readonly data: string;
  readonly sinkListen: string;
  readonly coordinatorListen: string;
  /** Null with --insecure. */
  readonly auth: { credentialsFile: string; sinkTokenFile: string } | null;
  /** SIGTERM to SIGKILL, per child. */
  readonly stopGraceMs: number;
}

/** Creates the data directory and credentials; a path that cannot hold them is a ConfigError. */
function prepareCluster(options: { data: string; sinkListen: string; coordinatorListen: string; insecure?: boolean; stopGraceMs: number }): ClusterPlan {
  const data = resolve(options.data);
  try {
    mkdirSync(join(data, 'logs'), { recursive: true });
  } catch (error) {
    throw new ConfigError(`cannot use ${data} as the data directory: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return {
    data,
    sinkListen: options.sinkListen,
    coordinatorListen: options.coordinatorListen,
    auth: options.insecure ? null : ensureCredentials(data),
    stopGraceMs: options.stopGraceMs,
  };
}

/**
 * Starts the sink, then the coordinator wired to it, and prints one ready
 * line. Exits 0 after a clean stop on SIGINT/SIGTERM; exits 1 when a child
 * cannot start, dies on its own, or has to be killed: the cluster never
 * outlives a child, nor leaves one behind.
 */
async function runCluster(plan: ClusterPlan): Promise<void> {
  const { data, auth } = plan;
  const children: ReadyChild[] = [];
  // A child still starting is not in `children` yet; a stop must end it too.
  const starting = new Set<Promise<unknown>>();
  const abortStarts = new AbortController();
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    abortStarts.abort();
    await Promise.allSettled(starting); // each settles only once its child is gone
    // Coordinator first: it depends on the sink, not the other way round.
    // (After Ctrl-C the children got SIGINT from the terminal already; they
    // ignore this SIGTERM while stopping and finish cleanly.)
    let clean = true;
    for (const { child, exited } of [...children].reverse()) {
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), plan.stopGraceMs);
      if ((await exited).code !== 0) clean = false;
      clearTimeout(kill);
    }
    process.exit(code === 0 && !clean ? 1 : code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  const start = async (service: 'sink' | 'coordinator', args: string[]): Promise<ReadyChild | undefined> => {
    const log = join(data, 'logs', `${service}.log`);
    const logFd = openSync(log, 'a');
    const spawned = spawnReady(FENCER_BIN, [service, ...args], { stderrFd: logFd, signal: abortStarts.signal });
    closeSync(logFd); // the child has its own copy
    starting.add(spawned);
    let started: ReadyChild;
    try {
      started = await spawned;
    } catch (error) {
      if (stopping) return undefined; // stopped while starting: nothing to explain
      // The child's own one-line reason is the last line of its log.
      const reason = lastLine(log) ?? (error as Error).message.split('\n')[0];
      process.stderr.write(`fencer cluster: the ${service} did not start: ${reason} (log: ${log})\n`);
      await stopAll(1);
      return undefined;
    } finally {
      starting.delete(spawned);
    }
    children.push(started);
    void started.exited.then(({ code, signal }) => {
      if (stopping) return;
      process.stderr.write(`fencer cluster: the ${service} exited (code ${code}, signal ${signal}); see ${log}. Stopping.\n`);
      void stopAll(1);
    });
    return started;
  };

  const authArgs = (file: string | null) => (file ? ['--credentials', file] : ['--insecure']);
  const sink = await start('sink', ['--listen', plan.sinkListen, '--data', join(data, 'sink'), ...authArgs(auth?.credentialsFile ?? null)]);
  if (!sink || stopping) return;
  const coordinator = await start('coordinator', [
    '--listen', plan.coordinatorListen,
    '--data', join(data, 'coordinator'),
    '--sink', sink.ready.address,
    ...(auth ? ['--sink-token-file', auth.sinkTokenFile] : []),
    ...authArgs(auth?.credentialsFile ?? null),
  ]);
  if (!coordinator || stopping) return;

  const addresses = { sink: sink.ready.address, coordinator: coordinator.ready.address };
  // The pids let tools (and tests) signal one child: SIGSTOP it, or kill it.
  const pids = { sink: sink.child.pid, coordinator: coordinator.child.pid };
  process.stdout.write(JSON.stringify({ event: 'ready', service: 'cluster', address: addresses.coordinator, ...addresses, pids }) + '\n');
  process.stdout.write(
    [
      '',
      `  sink         ${addresses.sink}   data ${join(data, 'sink')}, log ${join(data, 'logs', 'sink.log')}`,
      `  coordinator  ${addresses.coordinator}   data ${join(data, 'coordinator')}, log ${join(data, 'logs', 'coordinator.log')}`,
      auth
        ? `  credentials  ${auth.credentialsFile}   (workers: worker-a, worker-b; send "authorization: Bearer <token>")`
        : '  credentials  none (--insecure)',
      '',
      'Both services serve reflection, so any gRPC client can explore them. Ctrl-C stops both.',
      '',
    ].join('\n'),
  );
}

/**
 * Creates DATA/credentials.json (mode 0600) and DATA/coordinator.token once;
 * later runs reuse them so clients' tokens stay valid across restarts.
 */
function ensureCredentials(data: string): { credentialsFile: string; sinkTokenFile: string } {
  const credentialsFile = join(data, 'credentials.json');
  const sinkTokenFile = join(data, 'coordinator.token');
  if (!existsSync(credentialsFile)) {
    const credentials = GENERATED_IDENTITIES.map(({ identity, role }) => ({
      token: randomBytes(24).toString('base64url'),
      identity,
      role,
    }));
    writeFileSync(credentialsFile, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  }
  if (!existsSync(sinkTokenFile)) {
    // Derived from the credentials file, so an edited file keeps working.
    let credentials;
    try {
      credentials = readCredentialsFile(credentialsFile);
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
    const coordinator = credentials.find((c) => c.role === 'coordinator');
    if (!coordinator) throw new ConfigError(`${credentialsFile} has no coordinator credential for the sink`);
    writeFileSync(sinkTokenFile, coordinator.token + '\n', { mode: 0o600 });
  }
  return { credentialsFile, sinkTokenFile };
}

/** The last non-empty line of a file, if any. */
function lastLine(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').at(-1) || undefined;
  } catch {
    return undefined;
  }
}
