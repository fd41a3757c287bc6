// A sink and a coordinator as separate `fencer` processes on one machine,
// wired together with generated credentials: what `fencer cluster` runs,
// and what the demo, the chaos suite and the bench start. This module
// starts and stops children; it never exits the process or handles signals
// (that is the caller's lifecycle).
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '@fencer/server-kit';
import { ensureCredentials, type ClusterCredentials } from './credentials.js';
import { fencerBin } from './fencer-bin.js';
import { spawnReady, stopChild, type ReadyChild } from './spawn.js';

/** The services of a cluster, in start order. */
export type ClusterService = 'sink' | 'coordinator';

/** What startCluster runs, and where. */
export interface ClusterOptions {
  /** Data directory: sink/, coordinator/, logs/, credentials.json, coordinator.token. */
  readonly data: string;
  /** HOST:PORT of each service; port 0 picks a free one. */
  readonly sinkListen: string;
  readonly coordinatorListen: string;
  /** No credentials at all (A1 off); local experiments only. */
  readonly insecure: boolean;
  /** SIGTERM to SIGKILL, per child, when stopping. */
  readonly stopGraceMs: number;
  /** Aborting while children are still starting stops them; startCluster then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** How a child ended on its own, while the cluster was not stopping. */
export interface ChildExit {
  readonly service: ClusterService;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly log: string;
}

/** A running cluster. */
export interface Cluster {
  /** The absolute data directory. */
  readonly data: string;
  readonly sink: ReadyChild;
  readonly coordinator: ReadyChild;
  /** Null when insecure. */
  readonly credentials: ClusterCredentials | null;
  /** Each service's log file (its stderr). */
  readonly logs: Readonly<Record<ClusterService, string>>;
  /** Resolves when a child exits by itself; never once stop() has begun. */
  readonly childExited: Promise<ChildExit>;
  /** Stops the coordinator, then the sink; `clean` is false if either had to be killed or exited non-zero. Idempotent. */
  stop(): Promise<{ clean: boolean }>;
}

/** A child of the cluster did not start; the message carries its own reason and log path. */
export class ClusterStartError extends Error {
  override name = 'ClusterStartError';
}

/**
 * Prepares `options.data` (creating it and, unless insecure, the
 * credentials), starts the sink, then the coordinator wired to it. Throws
 * ConfigError for an unusable data directory and ClusterStartError when a
 * child does not start; either way nothing it started is left running.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const data = resolve(options.data);
  try {
    mkdirSync(join(data, 'logs'), { recursive: true });
  } catch (error) {
    throw new ConfigError(
      `cannot use ${data} as the data directory: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const credentials = options.insecure ? null : ensureCredentials(data);
  const logs = { sink: join(data, 'logs', 'sink.log'), coordinator: join(data, 'logs', 'coordinator.log') };
  const started: { service: ClusterService; child: ReadyChild }[] = [];
  let stopping: Promise<{ clean: boolean }> | undefined;
  let reportExit!: (exit: ChildExit) => void;
  const childExited = new Promise<ChildExit>((resolve) => (reportExit = resolve));

  const stop = () =>
    (stopping ??= (async () => {
      let clean = true;
      // Coordinator first: it depends on the sink, not the other way round.
      for (const { child } of [...started].reverse()) {
        if ((await stopChild(child, options.stopGraceMs)).code !== 0) clean = false;
      }
      return { clean };
    })());

  const start = async (service: ClusterService, args: string[]): Promise<ReadyChild> => {
    const logFd = openSync(logs[service], 'a');
    let child: ReadyChild;
    try {
      child = await spawnReady(fencerBin(), [service, ...args], {
        stderrFd: logFd,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      // The child's own one-line reason is the last line of its log.
      const reason = lastLine(logs[service]) ?? (error as Error).message.split('\n')[0];
      throw new ClusterStartError(`the ${service} did not start: ${reason} (log: ${logs[service]})`);
    } finally {
      closeSync(logFd); // the child has its own copy
    }
    started.push({ service, child });
    void child.exited.then(({ code, signal }) => {
      if (!stopping) reportExit({ service, code, signal, log: logs[service] });
    });
    return child;
  };

  const authArgs = credentials ? ['--credentials', credentials.credentialsFile] : ['--insecure'];
  try {
    const sink = await start('sink', ['--listen', options.sinkListen, '--data', join(data, 'sink'), ...authArgs]);
    const coordinator = await start('coordinator', [
      '--listen',
      options.coordinatorListen,
      '--data',
      join(data, 'coordinator'),
      '--sink',
      sink.ready.address,
      ...(credentials ? ['--sink-token-file', credentials.sinkTokenFile] : []),
      ...authArgs,
    ]);
    return { data, sink, coordinator, credentials, logs, childExited, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The last non-empty line of a file, if any. */
function lastLine(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').at(-1) || undefined;
  } catch {
    return undefined;
  }
}
