// A sink and a coordinator as separate `fencer` processes on one machine,
// wired together with generated credentials, every link through a named
// Toxiproxy proxy (its own `fencer toxiproxy`, or a running Toxiproxy): what `fencer cluster` runs,
// and what the demo, the chaos suite and the bench start. This module
// starts and stops children; it never exits the process or handles signals
// (that is the caller's lifecycle).
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, joinHostPort, splitHostPort } from '@fencer/server-kit';
import { Toxiproxy, type Proxy } from 'toxiproxy-node-client';
import { ensureCredentials, type ClusterCredentials } from './credentials.js';
import { fencerBin } from './fencer-bin.js';
import { spawnReady, stopChild, type ReadyChild } from './spawn.js';

/** The processes of a cluster, in start order (toxiproxy only when the cluster starts its own). */
export type ClusterService = 'toxiproxy' | 'sink' | 'coordinator';

/** The links of a cluster, each through its own Toxiproxy proxy. */
export type ClusterLink = 'workersToCoordinator' | 'workersToSink' | 'coordinatorToSink';

/** Proxy names as Toxiproxy's API knows them (what nemeses address). */
export const LINK_PROXY_NAMES: Readonly<Record<ClusterLink, string>> = Object.freeze({
  workersToCoordinator: 'workers_to_coordinator',
  workersToSink: 'workers_to_sink',
  coordinatorToSink: 'coordinator_to_sink',
});

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
  /** A running Toxiproxy's API (http://HOST:PORT) to create the proxies in; absent: start `fencer toxiproxy`. */
  readonly toxiproxyUrl?: string;
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
  /** The Toxiproxy API every link's proxy lives in, and its process when the cluster started it. */
  readonly toxiproxy: { readonly url: string; readonly child: ReadyChild | null };
  /** HOST:PORT each link's proxy listens on: workers dial the first two, the coordinator dials the third. */
  readonly links: Readonly<Record<ClusterLink, string>>;
  /** Null when insecure. */
  readonly credentials: ClusterCredentials | null;
  /** Each process's log file (its stderr). */
  readonly logs: Readonly<Record<ClusterService, string>>;
  /** Resolves when a child exits by itself; never once stop() has begun. */
  readonly childExited: Promise<ChildExit>;
  /** Stops the coordinator, the sink, then the proxy (or removes its proxies from an external one); `clean` is false if either had to be killed or exited non-zero. Idempotent. */
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
  const logs = {
    toxiproxy: join(data, 'logs', 'toxiproxy.log'),
    sink: join(data, 'logs', 'sink.log'),
    coordinator: join(data, 'logs', 'coordinator.log'),
  };
  const proxies: Proxy[] = [];
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
      // Proxies in someone else's Toxiproxy would outlive us, pointing nowhere.
      if (options.toxiproxyUrl !== undefined) await Promise.allSettled(proxies.map((proxy) => proxy.remove()));
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

  /** Creates (or replaces) one link's proxy in front of `upstream`; resolves with the address it listens on. */
  const link = async (toxiproxy: Toxiproxy, name: ClusterLink, upstream: string): Promise<string> => {
    const listen = joinHostPort(splitHostPort(options.coordinatorListen).host, 0);
    const created = await toxiproxy.populate([{ name: LINK_PROXY_NAMES[name], listen, upstream, enabled: true }]);
    const proxy = created[LINK_PROXY_NAMES[name]];
    if (!proxy) throw new ClusterStartError(`Toxiproxy did not create the proxy ${LINK_PROXY_NAMES[name]}`);
    proxies.push(proxy);
    return proxy.listen;
  };

  const authArgs = credentials ? ['--credentials', credentials.credentialsFile] : ['--insecure'];
  try {
    const proxyChild =
      options.toxiproxyUrl === undefined
        ? await start('toxiproxy', ['--listen', joinHostPort(splitHostPort(options.coordinatorListen).host, 0)])
        : null;
    const toxiproxyUrl = options.toxiproxyUrl ?? `http://${proxyChild!.ready.address}`;
    const toxiproxy = new Toxiproxy(toxiproxyUrl);
    const sink = await start('sink', ['--listen', options.sinkListen, '--data', join(data, 'sink'), ...authArgs]);
    const coordinatorToSink = await link(toxiproxy, 'coordinatorToSink', sink.ready.address).catch(
      toxiproxyFailure(toxiproxyUrl),
    );
    const coordinator = await start('coordinator', [
      '--listen',
      options.coordinatorListen,
      '--data',
      join(data, 'coordinator'),
      '--sink',
      coordinatorToSink,
      ...(credentials ? ['--sink-token-file', credentials.sinkTokenFile] : []),
      ...authArgs,
    ]);
    const links = {
      coordinatorToSink,
      workersToSink: await link(toxiproxy, 'workersToSink', sink.ready.address).catch(toxiproxyFailure(toxiproxyUrl)),
      workersToCoordinator: await link(toxiproxy, 'workersToCoordinator', coordinator.ready.address).catch(
        toxiproxyFailure(toxiproxyUrl),
      ),
    };
    return {
      data,
      sink,
      coordinator,
      toxiproxy: { url: toxiproxyUrl, child: proxyChild },
      links,
      credentials,
      logs,
      childExited,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Turns a failed Toxiproxy API call into a ClusterStartError naming the API. */
function toxiproxyFailure(url: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof ClusterStartError) throw error;
    throw new ClusterStartError(
      `cannot create the cluster's proxies in Toxiproxy at ${url}: ${(error as Error).message}`,
    );
  };
}

/** The last non-empty line of a file, if any. */
function lastLine(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').at(-1) || undefined;
  } catch {
    return undefined;
  }
}
