// Process faults: a process frozen by SIGSTOP (any pid: a service, a
// worker), a service SIGKILLed and restarted on its address with its data
// kept or lost, and a rival coordinator granting on the same sink (a split
// brain). What PROTOCOL.md says must survive them: S5 across crashes, L6
// across a lost coordinator disk, S1/S3 against a rival.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { joinHostPort, splitHostPort } from '@fencer/cli-kit';
import {
  coordinatorArgs,
  sinkFlagValues,
  spawnLogged,
  stopChild,
  type Cluster,
  type ReadyChild,
  type RestartableProcess,
  type RestartOptions,
} from '@fencer/supervisor';
import type { FaketimeClock } from './clock.js';
import { defineNemesis, type Nemesis } from './fault.js';
import { redirect, type LinkTarget } from './network.js';

/** A process to act on: its pid, and the name its fault records carry. */
export interface ProcessTarget {
  readonly pid: number;
  readonly name: string;
}

/** The current process of a cluster service (the pid changes with every restart, so take it when the fault starts). */
export function serviceProcess(cluster: Pick<Cluster, 'pidOf'>, service: RestartableProcess): ProcessTarget {
  return { pid: cluster.pidOf(service), name: service };
}

/**
 * Pause: SIGSTOP, so the process holds its sockets and state but answers
 * nothing (callers see their deadline), like a long GC pause or a frozen VM.
 * Heal sends SIGCONT; a process that is gone by then has nothing to resume.
 */
export function pause(target: ProcessTarget): Nemesis {
  return defineNemesis('pause', { process: target.name }, async () => {
    process.kill(target.pid, 'SIGSTOP');
    return {
      detail: `SIGSTOP pid ${target.pid}`,
      undo: async () => {
        try {
          process.kill(target.pid, 'SIGCONT');
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
          return `pid ${target.pid} was gone`;
        }
        return 'SIGCONT';
      },
    };
  });
}

/**
 * Crash: SIGKILL the service, so whatever it had not synced is lost and its
 * links refuse connections; heal restarts it on the same address with the
 * same flags. With `wipeData` its data directory is deleted before the
 * restart (a lost disk: for the coordinator, L6 must still hold). A service
 * that runs on a fake `clock` (started with its env) comes back on it, where
 * the clock's model has it, at the skewed rate once it is up
 * (FaketimeClock.restarting, started).
 */
export function crash(
  cluster: Pick<Cluster, 'pidOf' | 'kill' | 'restart'>,
  service: RestartableProcess,
  options: RestartOptions & { readonly clock?: FaketimeClock } = {},
): Nemesis {
  const { clock, ...restart } = options;
  return defineNemesis(options.wipeData ? 'crash-wipe' : 'crash', { process: service }, async () => {
    const pid = cluster.pidOf(service);
    await cluster.kill(service);
    return {
      detail: `SIGKILL pid ${pid}`,
      undo: async () => {
        clock?.restarting();
        const next = await cluster.restart(service, restart).finally(() => clock?.started());
        return `restarted as pid ${next.child.pid} on ${next.ready.address}, data ${options.wipeData ? 'wiped' : 'kept'}`;
      },
    };
  });
}

/** Options of a rival coordinator. */
export interface RivalOptions {
  /** Its name: data in DATA/<name>, log in DATA/logs/<name>.log, and the name its fault records carry. Default `coordinator-2`. */
  readonly name?: string;
  /** SIGTERM to SIGKILL when it is stopped; default 5000 ms. */
  readonly stopGraceMs?: number;
  /**
   * Links whose callers it takes over while it runs (say, some workers'
   * own proxies to the coordinator): each is redirected to the rival once it
   * is up, and back to the upstream it had before the rival stops.
   */
  readonly redirect?: readonly LinkTarget[];
  /**
   * Start it with no data, as a coordinator that never granted anything.
   * Default false: an episode resumes what the one before left, and so
   * holds every lease it had granted for a TTL (L7) before granting again.
   */
  readonly fresh?: boolean;
}

const DEFAULT_RIVAL = 'coordinator-2';

/**
 * Starts a second `fencer coordinator` on the cluster's sinks: its own data
 * directory, the coordinator's credential, and each sink reached through the
 * coordinator's proxy to it (so link faults reach it too), listening on a
 * free port of the coordinator's host. Rejects with ClusterStartError if it
 * does not start. The caller stops it (stopChild), or it stops with this process.
 */
export function startRivalCoordinator(
  cluster: Pick<Cluster, 'data' | 'coordinator' | 'sinks' | 'credentials'>,
  name = DEFAULT_RIVAL,
): Promise<ReadyChild> {
  const listen = joinHostPort(splitHostPort(cluster.coordinator.ready.address).host, 0);
  const args = coordinatorArgs({
    listen,
    data: join(cluster.data, name),
    sinks: sinkFlagValues(cluster.sinks.map(({ name, links }) => ({ name, address: links.coordinatorToSink }))),
    credentials: cluster.credentials,
  });
  return spawnLogged(name, ['coordinator', ...args], join(cluster.data, 'logs', `${name}.log`));
}

/**
 * Split brain: a rival coordinator (startRivalCoordinator) runs while the
 * cluster's own does, each granting from its own counter. Leases may then
 * overlap, and only the fence keeps writes safe (L3, S1, S3). `rival` is the
 * running process while the fault is active: send workers to its address,
 * or have options.redirect send them. Heal sends the redirected links back,
 * then stops it (its data directory stays, so a later episode resumes it).
 */
export function splitBrain(
  cluster: Pick<Cluster, 'data' | 'coordinator' | 'sinks' | 'credentials'>,
  options: RivalOptions = {},
): Nemesis & { readonly rival: ReadyChild | undefined } {
  const name = options.name ?? DEFAULT_RIVAL;
  let rival: ReadyChild | undefined;
  const nemesis = defineNemesis('split-brain', { process: name }, async () => {
    if (options.fresh) rmSync(join(cluster.data, name), { recursive: true, force: true });
    const child = await startRivalCoordinator(cluster, name);
    const redirected: { link: LinkTarget; upstream: string }[] = [];
    const sendBack = async () => {
      await Promise.all(redirected.map(({ link, upstream }) => redirect(link, upstream)));
    };
    const stop = async () => {
      const { code, signal } = await stopChild(child, options.stopGraceMs ?? 5_000);
      rival = undefined;
      return `stopped (code ${code}, signal ${signal})`;
    };
    try {
      for (const link of options.redirect ?? []) {
        redirected.push({ link, upstream: await redirect(link, child.ready.address) });
      }
    } catch (error) {
      // Half a split brain is not what was asked for: take back what was done.
      await Promise.allSettled([sendBack().finally(stop)]);
      throw error;
    }
    rival = child;
    const sent = redirected.length > 0 ? `; ${redirected.map(({ link }) => link.proxy).join(', ')} sent to it` : '';
    return {
      detail: `rival coordinator pid ${child.child.pid} on ${child.ready.address}${sent}`,
      undo: async () => {
        await sendBack();
        return `${redirected.length > 0 ? 'links sent back; ' : ''}${await stop()}`;
      },
    };
  });
  return {
    ...nemesis,
    get rival() {
      return rival;
    },
  };
}
