// `fencer cluster`: the sink and the coordinator as separate processes on
// one machine, wired together with generated credentials, so a newcomer
// gets a working, authenticated pair with one command. (The fault proxy
// joins this line-up with its own issue.)
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { hostPort, spawnReady, type ReadyChild } from '@fencer/server-kit';

const FENCER_BIN = fileURLToPath(new URL('../bin/fencer.js', import.meta.url));

/** Identities the generated credentials file holds; workers act as their identity (A3). */
const GENERATED_IDENTITIES = [
  { identity: 'coordinator', role: 'coordinator' },
  { identity: 'admin', role: 'admin' },
  { identity: 'worker-a', role: 'worker' },
  { identity: 'worker-b', role: 'worker' },
] as const;

interface ClusterOptions {
  data: string;
  sinkListen: string;
  coordinatorListen: string;
  insecure: boolean;
}

export function clusterCommand(): Command {
  return new Command('cluster')
    .description('run a sink and a coordinator as separate processes, with generated credentials; Ctrl-C stops both')
    .addOption(new Option('--data <dir>', 'data directory: sink/, coordinator/, logs/, credentials.json').default('./data').env('FENCER_CLUSTER_DATA'))
    .addOption(new Option('--sink-listen <host:port>', 'sink address').default('127.0.0.1:50051').argParser(hostPort).env('FENCER_CLUSTER_SINK_LISTEN'))
    .addOption(new Option('--coordinator-listen <host:port>', 'coordinator address').default('127.0.0.1:50052').argParser(hostPort).env('FENCER_CLUSTER_COORDINATOR_LISTEN'))
    .addOption(new Option('--insecure', 'no credentials at all (local experiments only)').default(false).env('FENCER_CLUSTER_INSECURE'))
    .action((options: ClusterOptions) => runCluster(options));
}

async function runCluster(options: ClusterOptions): Promise<void> {
  const data = resolve(options.data);
  mkdirSync(join(data, 'logs'), { recursive: true });
  const auth = options.insecure ? null : ensureCredentials(data);
  const children: ReadyChild[] = [];
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    // Coordinator first: it depends on the sink, not the other way round.
    for (const { child, exited } of [...children].reverse()) {
      child.kill('SIGTERM');
      await exited;
    }
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  const start = async (service: 'sink' | 'coordinator', args: string[]) => {
    const log = join(data, 'logs', `${service}.log`);
    let started: ReadyChild;
    try {
      started = await spawnReady(FENCER_BIN, [service, ...args], { stderrFd: openSync(log, 'a') });
    } catch (error) {
      process.stderr.write(`fencer cluster: the ${service} did not start (see ${log}): ${(error as Error).message.split('\n')[0]}\n`);
      return stopAll(1).then(() => undefined);
    }
    children.push(started);
    void started.exited.then(({ code, signal }) => {
      if (stopping) return;
      process.stderr.write(`fencer cluster: the ${service} exited (code ${code}, signal ${signal}); see ${log}. Stopping.\n`);
      void stopAll(1);
    });
    return started.ready.address;
  };

  const authArgs = (file: string | null) => (file ? ['--credentials', file] : ['--insecure']);
  const sink = await start('sink', ['--listen', options.sinkListen, '--data', join(data, 'sink'), ...authArgs(auth?.credentialsFile ?? null)]);
  if (!sink) return;
  const coordinator = await start('coordinator', [
    '--listen', options.coordinatorListen,
    '--data', join(data, 'coordinator'),
    '--sink', sink,
    ...(auth ? ['--sink-token-file', auth.sinkTokenFile] : []),
    ...authArgs(auth?.credentialsFile ?? null),
  ]);
  if (!coordinator) return;

  process.stdout.write(JSON.stringify({ event: 'ready', service: 'cluster', address: coordinator, coordinator, sink }) + '\n');
  process.stdout.write(
    [
      '',
      `  sink         ${sink}   data ${join(data, 'sink')}, log ${join(data, 'logs', 'sink.log')}`,
      `  coordinator  ${coordinator}   data ${join(data, 'coordinator')}, log ${join(data, 'logs', 'coordinator.log')}`,
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
    writeFileSync(sinkTokenFile, credentials[0]!.token + '\n', { mode: 0o600 });
  }
  return { credentialsFile, sinkTokenFile };
}
