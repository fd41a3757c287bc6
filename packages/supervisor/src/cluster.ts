// A sink and a coordinator as separate `fencer` processes on one machine,
// wired together with generated credentials, every link through a named
// Toxiproxy proxy (its own `fencer toxiproxy`, or a running Toxiproxy): what `fencer cluster` runs,
// and what the demo and the chaos suite start. This module
// starts and stops children; it never exits the process or handles signals
// (that is the caller's lifecycle).
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, joinHostPort, splitHostPort } from '@fencer/server-kit';
import { Toxiproxy, type Proxy } from 'toxiproxy-node-client';
import { ensureCredentials, type ClusterCredentials } from './credentials.js';
import { fencerBin } from './fencer-bin.js';
import { spawnReady, stopChild, type ReadyChild } from './spawn.js';

/** The processes of a cluster, in start order (toxiproxy only when the cluster starts its own). */
export type ClusterService = 'toxiproxy' | 'sink' | 'coordinator';

/** The services a cluster can kill and restart (its Toxiproxy holds every proxy's state, so it stays up). */
export type RestartableService = Exclude<ClusterService, 'toxiproxy'>;

/** Options of Cluster.restart. */
export interface RestartOptions {
  /** Delete the service's data directory before it starts again: a lost disk. */
  readonly wipeData?: boolean;
}

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
  /**
   * Scripts run with node instead of `fencer` for these services, given
   * fencer's arguments (`<script> sink --listen ...`), on every start and
   * restart: a deliberately broken variant, for the chaos suite's negative controls.
   */
  readonly binaries?: { readonly sink?: string; readonly coordinator?: string };
  /**
   * Added to these services' environment on every start and restart, e.g. a
   * fake clock's LD_PRELOAD (the chaos suite's clock nemesis).
   */
  readonly env?: { readonly sink?: NodeJS.ProcessEnv; readonly coordinator?: NodeJS.ProcessEnv };
  /** SIGTERM to SIGKILL, per child, when stopping. */
  readonly stopGraceMs: number;
  /** More `fencer coordinator` flags, e.g. ['--fence-on-expiry']; kept across restarts. */
  readonly coordinatorFlags?: readonly string[];
  /** Worker identities to generate credentials for (default worker-a and worker-b). */
  readonly workers?: readonly string[];
  /** A running Toxiproxy's API (http://HOST:PORT) to create the proxies in; absent: start `fencer toxiproxy`. */
  /** Put before each proxy's name, so clusters sharing one Toxiproxy (TOXIPROXY_URL) keep their proxies apart. */
  readonly proxyPrefix?: string;
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
  /** The current sink process: a new one after each restart, on the same address. */
  readonly sink: ReadyChild;
  /** The current coordinator process: a new one after each restart, on the same address. */
  readonly coordinator: ReadyChild;
  /** The Toxiproxy API every link's proxy lives in, and its process when the cluster started it. */
  readonly toxiproxy: { readonly url: string; readonly child: ReadyChild | null };
  /** Each link's proxy name in the Toxiproxy API (LINK_PROXY_NAMES, after the proxyPrefix). */
  readonly proxyNames: Readonly<Record<ClusterLink, string>>;
  /** HOST:PORT each link's proxy listens on: workers dial the first two, the coordinator dials the third. */
  readonly links: Readonly<Record<ClusterLink, string>>;
  /** Null when insecure. */
  readonly credentials: ClusterCredentials | null;
  /** Each process's log file (its stderr). */
  readonly logs: Readonly<Record<ClusterService, string>>;
  /** Resolves when a child exits by itself; never for kill() or restart(), nor once stop() has begun. */
  readonly childExited: Promise<ChildExit>;
  /**
   * SIGKILLs the service (a crash) and resolves with how it exited (at once
   * if it already had). The exit is expected, so it is not reported on
   * childExited; restart() brings the service back.
   */
  kill(service: RestartableService): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Stops the service if it still runs (SIGTERM, SIGKILL after stopGraceMs),
   * deletes its data directory if asked, and starts it again with the same
   * flags on the address it had, so every proxy in front of it reaches the
   * new process. Resolves with the new child. Rejects with ClusterStartError
   * if it does not start (the service then stays down) or the cluster is
   * stopping. Kills and restarts run one at a time, in call order.
   */
  restart(service: RestartableService, options?: RestartOptions): Promise<ReadyChild>;
  /** Stops the coordinator, the sink, then the proxy (or removes its proxies from an external one); `clean` is false if either had to be killed or exited non-zero (but for one kill() ended). Idempotent; waits for a kill or restart under way. */
  stop(): Promise<{ clean: boolean }>;
}

/** Where a cluster's coordinator finds the sink and its credentials. */
export interface CoordinatorWiring {
  /** HOST:PORT it serves on; port 0 picks a free one. */
  readonly listen: string;
  /** Its own data directory. */
  readonly data: string;
  /** HOST:PORT of the sink, as this coordinator dials it (a proxy's listen). */
  readonly sink: string;
  /** The cluster's credentials (the coordinator's token for the sink, and whom it serves), or null when insecure. */
  readonly credentials: ClusterCredentials | null;
}

/** The `fencer coordinator` arguments (after the subcommand) of a coordinator wired into a cluster. */
export function coordinatorArgs(wiring: CoordinatorWiring): string[] {
  const { credentials } = wiring;
  return [
    '--listen',
    wiring.listen,
    '--data',
    wiring.data,
    '--sink',
    wiring.sink,
    ...(credentials
      ? ['--sink-token-file', credentials.sinkTokenFile, '--credentials', credentials.credentialsFile]
      : ['--insecure']),
  ];
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
  const credentials = options.insecure ? null : ensureCredentials(data, options.workers);
  const logs = {
    toxiproxy: join(data, 'logs', 'toxiproxy.log'),
    sink: join(data, 'logs', 'sink.log'),
    coordinator: join(data, 'logs', 'coordinator.log'),
  };
  const dataDirs: Readonly<Record<RestartableService, string>> = {
    sink: join(data, 'sink'),
    coordinator: join(data, 'coordinator'),
  };
  const proxies: Proxy[] = [];
  // Each service's current child, and its arguments for a given listen
  // address (a restart reuses them on the address the child had), in start order.
  const running = new Map<ClusterService, { child: ReadyChild; args: (listen: string) => string[] }>();
  // Exits this module caused on purpose (kill, restart): no news for childExited.
  const expectedExits = new WeakSet<ReadyChild>();
  let stopping: Promise<{ clean: boolean }> | undefined;
  let changes: Promise<unknown> = Promise.resolve();
  let reportExit!: (exit: ChildExit) => void;
  const childExited = new Promise<ChildExit>((resolve) => (reportExit = resolve));

  /** Runs kills and restarts one at a time, so a service is never started twice. */
  const serially = <T>(step: () => Promise<T>): Promise<T> => {
    const result = changes.then(step);
    changes = result.catch(() => undefined);
    return result;
  };

  const stop = () =>
    (stopping ??= (async () => {
      // A restart under way finishes first, so its new child is stopped too.
      await changes;
      let clean = true;
      // Coordinator first: it depends on the sink, not the other way round.
      for (const { child } of [...running.values()].reverse()) {
        const { code } = await stopChild(child, options.stopGraceMs);
        // A child kill() ended and nobody restarted went as it was asked to.
        if (code !== 0 && !expectedExits.has(child)) clean = false;
      }
      // Proxies in someone else's Toxiproxy would outlive us, pointing nowhere.
      if (options.toxiproxyUrl !== undefined) await Promise.allSettled(proxies.map((proxy) => proxy.remove()));
      return { clean };
    })());

  const start = async (
    service: ClusterService,
    listen: string,
    args: (listen: string) => string[],
  ): Promise<ReadyChild> => {
    const script = service === 'toxiproxy' ? undefined : options.binaries?.[service];
    const env = service === 'toxiproxy' ? undefined : options.env?.[service];
    const child = await spawnLogged(service, [service, ...args(listen)], logs[service], options.signal, script, env);
    running.set(service, { child, args });
    void child.exited.then(({ code, signal }) => {
      if (!stopping && !expectedExits.has(child)) reportExit({ service, code, signal, log: logs[service] });
    });
    return child;
  };

  const current = (service: RestartableService): ReadyChild => running.get(service)!.child;

  const kill = (service: RestartableService) =>
    serially(async () => {
      const child = current(service);
      expectedExits.add(child);
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
      return child.exited;
    });

  const restart = (service: RestartableService, restartOptions: RestartOptions = {}) =>
    serially(async () => {
      if (stopping) throw new ClusterStartError(`cannot restart the ${service}: the cluster is stopping`);
      const { child, args } = running.get(service)!;
      expectedExits.add(child);
      await stopChild(child, options.stopGraceMs);
      if (restartOptions.wipeData) rmSync(dataDirs[service], { recursive: true, force: true });
      // The address it had, not the one it was first given: port 0 would pick a new port.
      return start(service, child.ready.address, args);
    });

  /** Creates (or replaces) one link's proxy in front of `upstream`; resolves with the address it listens on. */
  const proxyNames = Object.fromEntries(
    Object.entries(LINK_PROXY_NAMES).map(([link, name]) => [link, (options.proxyPrefix ?? '') + name]),
  ) as Record<ClusterLink, string>;
  const link = async (toxiproxy: Toxiproxy, name: ClusterLink, upstream: string): Promise<string> => {
    const listen = joinHostPort(splitHostPort(options.coordinatorListen).host, 0);
    const created = await toxiproxy.populate([{ name: proxyNames[name], listen, upstream, enabled: true }]);
    const proxy = created[proxyNames[name]];
    if (!proxy) throw new ClusterStartError(`Toxiproxy did not create the proxy ${proxyNames[name]}`);
    proxies.push(proxy);
    return proxy.listen;
  };

  const authArgs = credentials ? ['--credentials', credentials.credentialsFile] : ['--insecure'];
  try {
    const proxyChild =
      options.toxiproxyUrl === undefined
        ? await start('toxiproxy', joinHostPort(splitHostPort(options.coordinatorListen).host, 0), (listen) => [
            '--listen',
            listen,
          ])
        : null;
    const toxiproxyUrl = options.toxiproxyUrl ?? `http://${proxyChild!.ready.address}`;
    const toxiproxy = new Toxiproxy(toxiproxyUrl);
    const sink = await start('sink', options.sinkListen, (listen) => [
      '--listen',
      listen,
      '--data',
      dataDirs.sink,
      ...authArgs,
    ]);
    const coordinatorToSink = await link(toxiproxy, 'coordinatorToSink', sink.ready.address).catch(
      toxiproxyFailure(toxiproxyUrl),
    );
    const coordinator = await start('coordinator', options.coordinatorListen, (listen) => [
      ...coordinatorArgs({ listen, data: dataDirs.coordinator, sink: coordinatorToSink, credentials }),
      ...(options.coordinatorFlags ?? []),
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
      proxyNames,
      get sink() {
        return current('sink');
      },
      get coordinator() {
        return current('coordinator');
      },
      toxiproxy: { url: toxiproxyUrl, child: proxyChild },
      links,
      credentials,
      logs,
      childExited,
      kill,
      restart,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Starts `fencer <args>` with its stderr appended to `log`, and resolves
 * once it is ready. A child that does not start is a ClusterStartError
 * naming it (`what`) with its own last log line; aborting `signal` first
 * rejects with the signal's reason. `script` runs instead of fencer; `env`
 * is added to its environment.
 */
export async function spawnLogged(
  what: string,
  args: readonly string[],
  log: string,
  signal?: AbortSignal,
  script: string = fencerBin(),
  env?: NodeJS.ProcessEnv,
): Promise<ReadyChild> {
  const logFd = openSync(log, 'a');
  try {
    return await spawnReady(script, args, { stderrFd: logFd, ...(signal ? { signal } : {}), ...(env ? { env } : {}) });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    // The child's own one-line reason is the last line of its log.
    const reason = lastLine(log) ?? (error as Error).message.split('\n')[0];
    throw new ClusterStartError(`the ${what} did not start: ${reason} (log: ${log})`);
  } finally {
    closeSync(logFd); // the child has its own copy
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
