// One named chaos scenario's world: a secured cluster (its own `fencer
// toxiproxy`, or the Toxiproxy at TOXIPROXY_URL), scripted or looping
// worker processes each behind a proxy pair of its own (so a fault can cut
// one worker off and not another), processes on fake clocks if asked,
// nemeses whose periods are recorded, and at the end the history checked
// against the sink's final state.
import type { ChildProcess } from 'node:child_process';
import { Toxiproxy } from 'toxiproxy-node-client';
import { CoordinatorConnection, SinkConnection } from '@fencer/client';
import {
  credentialToken,
  startCluster,
  startWorker,
  type Cluster,
  type ClusterLink,
  type ClusterOptions,
  type RestartableService,
  type StampedWorkerEvent,
  type WorkerProcess,
} from '@fencer/supervisor';
import { checkHistory, type CheckOptions } from '../checker/check.js';
import {
  operationFromCall,
  operationInFlight,
  type FaultPeriod,
  type History,
  type Operation,
} from '../checker/history.js';
import type { SendingEvent } from '@fencer/worker';
import type { Unchecked, Violation } from '../checker/round.js';
import { FaketimeClock, type ClockRateBound } from '../nemesis/clock.js';
import { clusterLink, type LinkTarget } from '../nemesis/network.js';
import type { Nemesis } from '../nemesis/fault.js';
import { readFinalState } from '../workload/workload.js';
import { clockUncertaintyMs, offsetRange, type ClockSample, type OffsetRange } from './clock-bound.js';
import { onSharedClock } from './shared-clock.js';

/** How a scenario's cluster runs. */
export interface ScenarioOptions {
  /** Short and unique: it names the scenario's proxies in a shared Toxiproxy. */
  readonly name: string;
  /** The data directory (sink/, coordinator/, credentials). */
  readonly data: string;
  /** Worker identities (default worker-a, worker-b). */
  readonly workers?: readonly string[];
  /** More `fencer coordinator` flags, e.g. ['--fence-on-expiry']. */
  readonly coordinatorFlags?: readonly string[];
  /** A running Toxiproxy to use (default: $TOXIPROXY_URL, else start `fencer toxiproxy`). */
  readonly toxiproxyUrl?: string;
  /** Scripts to run instead of `fencer` for a service: the negative controls' broken variants. */
  readonly binaries?: ClusterOptions['binaries'];
  /** Services to run on a fake clock of their own (Scenario.clocks), for the clock-skew nemesis. */
  readonly clocks?: readonly RestartableService[];
  /**
   * Coordinator replicas on etcd (H) in place of the one coordinator: this
   * many, on a 3-member etcd the cluster starts. Workers and the admin then
   * get every replica's address.
   */
  readonly replicas?: number;
  /** Sinks sharded by resource (P1): this many, sink-1, sink-2...; workers get every sink's address. Default 1. */
  readonly sinks?: number;
}

/** A worker of the scenario, with the links only it uses, and its fake clock if it runs on one. */
export interface ScenarioWorker extends WorkerProcess {
  /** `sink` is its link to the first sink (the only one, unsharded); `sinks` to each, in the cluster's order. */
  readonly links: {
    readonly coordinator: LinkTarget;
    readonly sink: LinkTarget;
    readonly sinks: readonly LinkTarget[];
  };
  readonly clock?: FaketimeClock;
}

/** Both ends of a check: the recorded history and what the checker found in it. */
export interface ScenarioVerdict {
  readonly history: History;
  readonly violations: readonly Violation[];
  /** What the checker could not judge: with no violation, neither safe nor unsafe. */
  readonly unchecked: readonly Unchecked[];
  /** The clock uncertainty (ms) the check assumed: `options` named it, or Scenario.clockUncertaintyMs. */
  readonly clockUncertaintyMs: number;
  /** The bound on the coordinator's clock the lock model assumed, if not the real rate. */
  readonly coordinatorClock?: ClockRateBound;
}

// Fault records carry performance.now() of this process; history times are
// on the clock the processes share (see @fencer/worker's events).
const sharedClockMs = (localMs: number) => performance.timeOrigin + localMs;
// The checker's margin before it was measured, kept as a floor: the
// harness's own readings (fault periods, calls of workers on a fake clock)
// are rounded to it, and a measured bound can only widen it. It also covers
// the error of each process's time origin, read once from the wall clock.
export const CLOCK_FLOOR_MS = 1;
// Round trips per worker, at most: one quick round trip is enough, but a
// worker still starting (or a loaded machine) answers some slowly.
const CLOCK_PROBES = 20;

/** A running scenario. */
export class Scenario {
  readonly cluster: Cluster;
  readonly toxiproxy: Toxiproxy;
  /** Straight to the services with the admin's credentials: Describe, GetFence, Read. */
  readonly admin: { readonly coordinator: CoordinatorConnection; readonly sink: SinkConnection };
  /** The fake clocks of the services started on one (ScenarioOptions.clocks). */
  readonly clocks: Readonly<Partial<Record<RestartableService, FaketimeClock>>>;
  readonly #name: string;
  readonly #operations: Operation[] = [];
  /** Calls sent and not yet answered, by owner and the worker's call number. */
  readonly #inFlight = new Map<string, { owner: string; sending: SendingEvent }>();
  readonly #faults: FaultPeriod[] = [];
  /** Each probed worker's offset from this process's clock. */
  readonly #clockOffsets: OffsetRange[] = [];
  readonly #workers: ScenarioWorker[] = [];
  readonly #proxies: string[] = [];
  readonly #active = new Set<Nemesis>();
  readonly #workerExits: string[] = [];
  readonly #killed = new Set<WorkerProcess>();
  #stopping = false;

  private constructor(
    name: string,
    cluster: Cluster,
    clocks: Readonly<Partial<Record<RestartableService, FaketimeClock>>>,
  ) {
    this.#name = name;
    this.cluster = cluster;
    this.clocks = clocks;
    this.toxiproxy = new Toxiproxy(cluster.toxiproxy.url);
    const token = credentialToken(cluster.credentials!.credentialsFile, { role: 'admin' });
    // With replicas the admin asks each one directly and follows NOT_LEADER (H7).
    const coordinators = cluster.replicas.map(({ child }) => child.ready.address);
    this.admin = {
      coordinator: new CoordinatorConnection(
        coordinators.length > 0 ? { coordinators, token } : { address: cluster.coordinator.ready.address, token },
      ),
      sink: new SinkConnection({ address: cluster.sink.ready.address, token }),
    };
  }

  /** Starts the scenario's cluster. */
  static async start(options: ScenarioOptions): Promise<Scenario> {
    const toxiproxyUrl = options.toxiproxyUrl ?? process.env.TOXIPROXY_URL;
    const clocks = Object.fromEntries(
      (options.clocks ?? []).map((service) => [service, FaketimeClock.create(service)]),
    ) as Partial<Record<RestartableService, FaketimeClock>>;
    const env = Object.fromEntries(Object.entries(clocks).map(([service, clock]) => [service, clock.env]));
    const cluster = await startCluster({
      data: options.data,
      sinkListen: '127.0.0.1:0',
      coordinatorListen: '127.0.0.1:0',
      insecure: false,
      stopGraceMs: 5_000,
      proxyPrefix: `${options.name}_`,
      workers: options.workers ?? ['worker-a', 'worker-b'],
      ...(options.coordinatorFlags ? { coordinatorFlags: options.coordinatorFlags } : {}),
      ...(toxiproxyUrl ? { toxiproxyUrl } : {}),
      ...(options.binaries ? { binaries: options.binaries } : {}),
      ...(options.replicas ? { replicas: { count: options.replicas } } : {}),
      ...(options.sinks ? { sinks: options.sinks } : {}),
      env,
    }).catch((error: unknown) => {
      for (const clock of Object.values(clocks)) clock.close();
      throw error;
    });
    // A line on its stdin (which it reads only to see its supervisor go) wakes a service to read its new rate.
    for (const [service, clock] of Object.entries(clocks)) {
      clock.wake = () => wake(cluster[service as RestartableService].child);
    }
    return new Scenario(options.name, cluster, clocks);
  }

  /** Workers that exited while the scenario ran, each with the tail of its stderr. */
  get workerExits(): readonly string[] {
    return this.#workerExits;
  }

  /** Every call the workers made so far. */
  get operations(): readonly Operation[] {
    return this.#operations;
  }

  /** The periods of the faults healed so far. */
  get faults(): readonly FaultPeriod[] {
    return this.#faults;
  }

  /**
   * How far the shared-clock readings of this process and of the workers
   * started so far may disagree (ms): measured at each worker's start by
   * round trips over its stdin and stdout (see clock-bound.ts), never less
   * than 1 ms. A worker on a fake clock is not probed: its times are mapped
   * to this process's clock.
   */
  get clockUncertaintyMs(): number {
    return clockUncertaintyMs(this.#clockOffsets, CLOCK_FLOOR_MS);
  }

  /**
   * Starts `fencer worker` as `owner` (`--commands` unless args say how to
   * loop), dialing the services through proxies of its own, and records
   * every call it makes. `coordinator` sends it to another coordinator
   * (a split brain's rival) instead of the cluster's. With replicas it gets
   * every replica's address through the cluster's own proxies (the
   * addresses the replicas advertise, where NOT_LEADER sends it anyway), and
   * its coordinator link is coordinator-1's; `clock` runs it on a
   * fake clock of its own (ScenarioWorker.clock); `env` is added to its
   * environment.
   */
  async worker(
    owner: string,
    args: readonly string[] = ['--commands'],
    options: { readonly coordinator?: string; readonly clock?: boolean; readonly env?: NodeJS.ProcessEnv } = {},
  ): Promise<ScenarioWorker> {
    const proxy = async (service: string, upstream: string) => {
      const name = `${this.#name}_${owner}_to_${service}`;
      const created = await this.toxiproxy.populate([{ name, listen: '127.0.0.1:0', upstream, enabled: true }]);
      this.#proxies.push(name);
      return { name, listen: created[name]!.listen };
    };
    const replicas = options.coordinator === undefined ? this.cluster.replicas : [];
    const coordinator =
      replicas.length > 0
        ? {
            name: replicas[0]!.proxyNames.workersToCoordinator,
            listen: replicas.map(({ links }) => links.workersToCoordinator).join(','),
          }
        : await proxy('coordinator', options.coordinator ?? this.cluster.coordinator.ready.address);
    // Named as the cluster names its own proxies to each sink: to_sink, or to_sink_2 of several.
    const sinks = await Promise.all(
      this.cluster.sinks.map(({ child }, index) =>
        proxy(`sink${this.cluster.sinks.length === 1 ? '' : `_${index + 1}`}`, child.ready.address),
      ),
    );
    const clockAnswers = new Map<string, (readMs: number, answeredMs: number) => void>();
    const clock = options.clock ? FaketimeClock.create(owner) : undefined;
    const onShared = clock ? onSharedClock(clock) : (event: StampedWorkerEvent) => event;
    const started = await startWorker({
      coordinator: coordinator.listen,
      sink: sinks.map(({ listen }) => listen).join(','),
      owner,
      tokenFile: this.cluster.credentials!.workerTokenFiles[owner]!,
      args,
      ...(clock || options.env ? { env: { ...options.env, ...clock?.env } } : {}),
      onEvent: (stamped) => {
        if (stamped.event === 'clock')
          clockAnswers.get(stamped.probe)?.(stamped.atMs, sharedClockMs(performance.now()));
        const event = onShared(stamped);
        if (event.event === 'sending') this.#inFlight.set(`${owner}#${event.seq}`, { owner, sending: event });
        if (event.event === 'call') {
          this.#inFlight.delete(`${owner}#${event.seq}`);
          this.#operations.push(operationFromCall(this.#operations.length + 1, owner, event));
        }
      },
    }).catch((error: unknown) => {
      clock?.close();
      throw error;
    });
    // An empty line is no command: it only wakes the worker to read its new rate.
    if (clock) clock.wake = () => wake(started.child);
    // A worker on a fake clock is not probed: its times are mapped to this process's clock.
    if (!clock) this.#clockOffsets.push(offsetRange(await probeClock(started, clockAnswers)));
    const worker = Object.assign(started, {
      links: {
        coordinator: { toxiproxy: this.toxiproxy, proxy: coordinator.name },
        sink: { toxiproxy: this.toxiproxy, proxy: sinks[0]!.name },
        sinks: sinks.map(({ name }) => ({ toxiproxy: this.toxiproxy, proxy: name })),
      },
      ...(clock ? { clock } : {}),
    });
    this.#workers.push(worker);
    void started.exited.then(({ code, signal }) => {
      if (!this.#stopping && !this.#killed.has(started))
        this.#workerExits.push(
          `${owner} exited (code ${code}, signal ${signal}): ${started.stderr().trim().slice(-500)}`,
        );
    });
    return worker;
  }

  /**
   * SIGKILLs a worker on purpose: the calls it had in flight stay unknown
   * to the history, and its exit is not reported as a death.
   */
  async killWorker(worker: ScenarioWorker): Promise<void> {
    this.#killed.add(worker);
    worker.child.kill('SIGKILL');
    await worker.exited;
  }

  /** A link of the cluster itself (the coordinator's to the sink, say). */
  link(link: ClusterLink): LinkTarget {
    return clusterLink(this.cluster, link);
  }

  /** Starts a nemesis; the returned heal() ends it and records its period. */
  async inject(nemesis: Nemesis): Promise<() => Promise<void>> {
    await nemesis.start();
    this.#active.add(nemesis);
    return () => this.#heal(nemesis);
  }

  /** Heals an injected nemesis and records its period in the history. */
  async #heal(nemesis: Nemesis): Promise<void> {
    this.#active.delete(nemesis);
    const record = await nemesis.heal();
    if (record) {
      this.#faults.push({
        name: record.name,
        target: 'link' in record ? record.link : record.process,
        startMs: sharedClockMs(record.startMs),
        endMs: sharedClockMs(record.endMs),
      });
    }
  }

  /** Resolves once the coordinator, on its own clock, no longer counts a lease on `resource` (L1). */
  async leaseGone(resource: string, timeoutMs = 15_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while ((await this.admin.coordinator.describe(resource)).lease) {
      if (performance.now() > deadline) throw new Error(`the lease on ${resource} did not end within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Ends the run: heals what is still injected, stops the workers, reads
   * the sink's final state and checks the history (S1–S6 and the lock
   * model, as `options` say; a coordinator on a fake clock gives the lock
   * model its bound over spans of the longest TTL asked for, unless
   * `options` name one).
   */
  async verdict(options: CheckOptions = {}): Promise<ScenarioVerdict> {
    // A worker that died mid-run took calls with it that the history never saw.
    if (this.#workerExits.length > 0) throw new Error(`a worker died: ${this.#workerExits.join('; ')}`);
    this.#stopping = true;
    // Faults still on ran until now: their periods belong in the history.
    for (const nemesis of [...this.#active]) await this.#heal(nemesis);
    for (const worker of this.#workers) worker.child.kill('SIGCONT');
    await Promise.all(this.#workers.map((worker) => worker.stop(3_000)));
    return this.#check(options);
  }

  /**
   * Checks the history recorded so far as verdict() does, but heals and
   * stops nothing: for a file that runs several faults on one cluster and
   * checks after each. Faults still injected are not in it yet; a call still
   * in flight counts as unknown (it may yet land), so check when the
   * workers are idle.
   */
  async check(options: CheckOptions = {}): Promise<ScenarioVerdict> {
    if (this.#workerExits.length > 0) throw new Error(`a worker died: ${this.#workerExits.join('; ')}`);
    return this.#check(options);
  }

  async #check(options: CheckOptions): Promise<ScenarioVerdict> {
    // A call a stopped worker never saw end may still have landed: unknown.
    const endedAtMs = performance.timeOrigin + performance.now();
    const operations = [
      ...this.#operations,
      ...[...this.#inFlight.values()].map(({ owner, sending }, i) =>
        operationInFlight(this.#operations.length + i + 1, owner, sending, endedAtMs),
      ),
    ];
    const history: History = {
      operations,
      final: await readFinalState(this.cluster, operations),
      faults: [...this.#faults],
    };
    // The lock model compares the coordinator's clock over spans no longer than a lease's TTL.
    const coordinatorClock = options.coordinatorClock ?? this.clocks.coordinator?.bound(longestTtlMs(operations));
    const clockUncertaintyMs = options.clockUncertaintyMs ?? this.clockUncertaintyMs;
    return {
      history,
      ...checkHistory(history, {
        ...options,
        ...(coordinatorClock ? { coordinatorClock } : {}),
        clockUncertaintyMs,
      }),
      clockUncertaintyMs,
      ...(coordinatorClock ? { coordinatorClock } : {}),
    };
  }

  /** Heals what is still injected, stops everything the scenario started and removes its proxies from the Toxiproxy. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.allSettled([...this.#active].map((nemesis) => nemesis.heal()));
    for (const worker of this.#workers) worker.child.kill('SIGCONT');
    await Promise.all(this.#workers.map((worker) => worker.stop(3_000)));
    this.admin.coordinator.close();
    this.admin.sink.close();
    await Promise.allSettled(this.#proxies.map(async (name) => (await this.toxiproxy.get(name)).remove()));
    try {
      await this.cluster.stop();
    } finally {
      for (const clock of [...Object.values(this.clocks), ...this.#workers.map((w) => w.clock)]) clock?.close();
    }
  }
}

/** The longest TTL any Acquire or Renew of `operations` asked for (ms; a Renew's 0 keeps one asked before); 0 if none. */
function longestTtlMs(operations: readonly Operation[]): number {
  return operations.reduce(
    (most, op) =>
      op.method === 'Acquire' || op.method === 'Renew' ? Math.max(most, Number(op.request.ttl_ms) || 0) : most,
    0,
  );
}

/**
 * Asks a worker for its shared-clock reading, one round trip after another,
 * until its samples bound its offset within half the floor, or
 * CLOCK_PROBES times; rejects if an answer takes more than 5 s.
 */
async function probeClock(
  worker: WorkerProcess,
  answers: Map<string, (readMs: number, answeredMs: number) => void>,
): Promise<ClockSample[]> {
  const samples: ClockSample[] = [];
  const tight = () => {
    const range = offsetRange(samples);
    return range.maxMs - range.minMs <= CLOCK_FLOOR_MS / 2;
  };
  for (let probe = 1; probe <= CLOCK_PROBES && (samples.length === 0 || !tight()); probe++) {
    const key = String(probe);
    samples.push(
      await new Promise<ClockSample>((resolve, reject) => {
        const timer = setTimeout(() => {
          answers.delete(key);
          reject(new Error(`worker ${worker.owner} did not answer clock probe ${key} within 5 s`));
        }, 5_000);
        const askedMs = sharedClockMs(performance.now());
        answers.set(key, (readMs, answeredMs) => {
          clearTimeout(timer);
          answers.delete(key);
          resolve({ askedMs, readMs, answeredMs });
        });
        worker.send(`clock ${key}`);
      }),
    );
  }
  return samples;
}

/** Writes an empty line to a child still running: it wakes its event loop, and so has it read its clock. */
function wake(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.stdin?.write('\n');
}
