// A seeded soak: workers on a few resources running a seeded generator's
// mix of calls (or looping), and a random schedule of nemeses (partitions,
// blackholes, lost requests or replies, a process isolated, flapping links,
// latency past the TTL, resets, pauses of any process, crashes of either
// service, a coordinator crashed with its data wiped, and a split brain: a
// rival coordinator on the same sink, with every other worker of each
// resource sent to it while it runs, and clock skew) drawn from the seed, so
// the same seed replays the same faults at the same offsets. The history is
// checked at the end. S1 and S3–S6 are judged in full whatever the faults:
// the sink's fence arbitrates every write, whoever granted its token (L3,
// F4), which is the point of the project. A wipe and a split brain break two
// promises of the coordinator by design, and the checker relaxes exactly
// those, only around the periods the history records for them (a wiped
// coordinator forgets its holders and request records; a rival grants from
// its own):
// - the lock model does not judge L2 on a grant whose call overlaps such a
//   period or the TTL after it (by then every lease the other memory knew
//   has run out), since L3 lets a coordinator grant over a lease it never
//   knew of; nor L4/L5 on a Renew or Release answered after such a period
//   began of a grant sent before that TTL ran out, since the coordinator
//   answering may not hold the latest grant. It still judges the token
//   order (L6) everywhere: every grant moved the fence, which only rises.
// - S2 is not judged between two grants of one request id sent before such
//   a period ended and answered after it began (R1's records live in one
//   coordinator's memory), and is judged everywhere else.
// Clock skew: the coordinator and every other worker run under libfaketime,
// at the real rate until the nemesis sets another. L1 lets a coordinator on
// a fast clock end leases early in real time, so the lock model is given the
// most its clock can have run ahead (Scenario.verdict); a worker on a slow
// clock believes in a lease the coordinator has ended, and only the fence
// may refuse it (S3). A skewed worker's own stamps never reach the history:
// the harness maps them to its own clock (earliest possible sending, bounded
// by its receipt of the worker's line announcing it; its own receipt of the
// answer), and the workers on real clocks are probed.
// With replicas (`fencer chaos --replicas N`), coordinator replicas on a
// 3-member etcd take the coordinator's place and the replica faults join
// the draw (the leader killed or paused, a replica cut from etcd, etcd
// members killed: H2–H6); the workers get every replica's address (H7).
// The coordinator's own kinds are then drawn on the replicas' links only:
// a crash-wipe means nothing to a store in etcd, a rival would need the
// replicas' advertised links redirected, and a replica on a skewed clock is
// outside H's clock-rate allowance, so those three stay out.
// With several sinks (`fencer chaos --sinks N`), resources are sharded over
// sink-1, sink-2... (P1): each sink and its links are a target of their own
// (one sink crashed stops only its resources), the workers get every sink's
// address (P3), and the checker reads each resource's state on its owner
// and flags what another sink holds (P4).
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { sleep } from '@fencer/client';
import type { Unchecked, Violation } from '../checker/round.js';
import { checkHistory } from '../checker/check.js';
import type { History } from '../checker/history.js';
import {
  libfaketime,
  nemesisFor,
  schedule,
  type ClockRateBound,
  type FaketimeClock,
  type ScheduledFault,
} from '../nemesis/index.js';
import type { NemesisKind } from '../nemesis/fault.js';
import type { LinkTarget } from '../nemesis/network.js';
import { Scenario, type ScenarioOptions } from '../scenario/harness.js';
import { DEFAULT_WORKLOAD, loopingWorkerArgs, mixWorkerArgs, type WorkloadMix } from '../workload/workload.js';

/** The nemeses a soak draws from. */
export const SOAK_KINDS: readonly NemesisKind[] = Object.freeze([
  'partition',
  'blackhole',
  'reply-loss',
  'request-loss',
  'latency',
  'reset-peer',
  'isolate',
  'flap',
  'pause',
  'crash',
  'crash-wipe',
  'split-brain',
  'clock-skew',
]);

/** The replica faults a soak with replicas adds to its draw. */
export const REPLICA_SOAK_KINDS: readonly NemesisKind[] = Object.freeze([
  'kill-leader',
  'pause-leader',
  'cut-from-etcd',
  'kill-etcd',
  'kill-etcd-majority',
]);

/** Kinds a soak with replicas leaves out (see the top of this file). */
const NOT_WITH_REPLICAS: readonly NemesisKind[] = Object.freeze(['crash-wipe', 'split-brain', 'clock-skew']);

/** The replicas' leader TTL in a soak: a failover within the faults' lengths (the default 5 s would outlast most). */
const SOAK_LEADER_TTL_MS = 1_500;

/** The rates clock-skew sets in a soak, faster and slower; the coordinator's fastest bounds the lock model's trust in a TTL. */
const SOAK_CLOCK_RATES: readonly number[] = Object.freeze([2, 0.5, 0.25]);

/** What a soak runs. */
export interface SoakOptions {
  readonly seconds: number;
  readonly seed: number;
  /** Data directory of the run's cluster. */
  readonly data: string;
  readonly workers: number;
  readonly resources: number;
  /**
   * What the workers do (default `default`: the generator's mix that gives
   * every invariant the checker judges chances to break); worker i draws
   * its calls from seed × 26 + i, so a seed replays them too.
   */
  readonly mix?: WorkloadMix;
  /** A running Toxiproxy (default: $TOXIPROXY_URL, else `fencer toxiproxy`). */
  readonly toxiproxyUrl?: string;
  /**
   * Scripts to run instead of `fencer` for a service: a negative control
   * soaks a broken variant (chaos/variants). No flag of `fencer chaos` sets it.
   */
  readonly binaries?: ScenarioOptions['binaries'];
  /**
   * Run the coordinator and every other worker under libfaketime and draw
   * clock-skew (default true). Throws at the start if libfaketime is not
   * installed; false leaves clock-skew out, with every process on its real clock.
   */
  readonly clockSkew?: boolean;
  /** Coordinator replicas on etcd in place of the one coordinator (at least 2), and the replica faults drawn too. */
  readonly replicas?: number;
  /** Sinks sharded by resource (P1), each a target of the faults; default 1. */
  readonly sinks?: number;
  /** Called about twice a second while the run goes on. */
  readonly onProgress?: (progress: SoakProgress) => void;
  /** Ends the run early: faults are healed, everything is stopped, and runSoak rejects with the reason. */
  readonly signal?: AbortSignal;
}

/** Live counts of a soak. */
export interface SoakProgress {
  readonly elapsedMs: number;
  readonly totalMs: number;
  readonly operations: number;
  readonly faults: number;
  /** Violations the calls so far already show (a partial check, rerun less often as the history grows). */
  readonly violations: number;
}

/** What a soak found. */
export interface SoakResult {
  readonly seed: number;
  readonly plan: readonly ScheduledFault[];
  readonly history: History;
  readonly violations: readonly Violation[];
  /** What the checker could not judge: with no violation, the verdict is unknown. */
  readonly unchecked: readonly Unchecked[];
  /** The clock uncertainty the check assumed (ms): measured at the workers' start (Scenario.clockUncertaintyMs). */
  readonly clockUncertaintyMs: number;
  /** How fast the lock model took the coordinator's clock to have run, if clock skew made it other than the real rate. */
  readonly coordinatorClock?: ClockRateBound;
}

const SOAK_WORKLOAD = { ...DEFAULT_WORKLOAD, stepMs: 50 };
// Longer than the workers' TTL, so a renewal cannot get through in time.
const LATENCY_MS = DEFAULT_WORKLOAD.ttlMs * 1.5;

/** Runs one soak to the end and checks it; the cluster is stopped whatever happens. */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const owners = Array.from({ length: options.workers }, (_, i) => `worker-${String.fromCharCode(97 + i)}`);
  const replicas = options.replicas ?? 0;
  const clockSkew = options.clockSkew ?? true;
  // Says which library is missing before anything starts.
  if (clockSkew) libfaketime();
  const s = await Scenario.start({
    name: `soak${options.seed}`,
    data: join(options.data),
    workers: owners,
    ...(clockSkew && replicas === 0 ? { clocks: ['coordinator'] } : {}),
    ...(replicas > 0 ? { replicas, coordinatorFlags: ['--leader-ttl-ms', String(SOAK_LEADER_TTL_MS)] } : {}),
    ...(options.sinks ? { sinks: options.sinks } : {}),
    ...(options.toxiproxyUrl ? { toxiproxyUrl: options.toxiproxyUrl } : {}),
    ...(options.binaries ? { binaries: options.binaries } : {}),
  });
  try {
    const mix = options.mix ?? 'default';
    const workers = await Promise.all(
      owners.map((owner, i) => {
        const resource = `job-${(i % options.resources) + 1}`;
        return s.worker(
          owner,
          mix === 'loop'
            ? loopingWorkerArgs(resource, SOAK_WORKLOAD)
            : mixWorkerArgs(resource, mix, options.seed * 26 + i, SOAK_WORKLOAD),
          { clock: clockSkew && i % 2 === 0 },
        );
      }),
    );
    const links: Record<string, LinkTarget> = {};
    const add = (link: LinkTarget) => (links[link.proxy] = link);
    for (const worker of workers) {
      // With replicas a worker's coordinator link is the replicas' own (below), shared by all.
      if (replicas === 0) add(worker.links.coordinator);
      worker.links.sinks.forEach(add);
    }
    for (const sink of s.cluster.sinks) {
      // The replicas' links to the sinks are theirs, below.
      if (replicas === 0) add({ toxiproxy: s.toxiproxy, proxy: sink.proxyNames.coordinatorToSink });
    }
    for (const replica of s.cluster.replicas) {
      for (const proxy of [replica.proxyNames.workersToCoordinator, ...replica.proxyNames.coordinatorToSink])
        add({ toxiproxy: s.toxiproxy, proxy });
    }
    const sinkNames = s.cluster.sinks.map(({ name }) => name);
    // Isolating a process cuts its workers' own proxies too, besides the cluster's links.
    const linksOf: Record<string, LinkTarget[]> = Object.fromEntries(
      sinkNames.map((name, index) => [name, workers.map((w) => w.links.sinks[index]!)]),
    );
    if (replicas === 0) {
      linksOf.coordinator = workers.map((w) => w.links.coordinator);
      for (const w of workers) linksOf[w.owner] = [w.links.coordinator, ...w.links.sinks];
    }
    const linkNames = Object.keys(links);
    // With replicas, 'coordinator' would be coordinator-1 alone, beside the replica faults on it: left to those.
    const services = replicas === 0 ? [...sinkNames, 'coordinator'] : sinkNames;
    // Every other worker of each resource goes to the rival during a split
    // brain, so both coordinators grant on every resource with two workers.
    const rivalLinks = workers
      .filter((_, i) => Math.floor(i / options.resources) % 2 === 1)
      .map((w) => w.links.coordinator);
    const pids = Object.fromEntries(workers.map((w) => [w.owner, w.child.pid!]));
    const clocks: Record<string, FaketimeClock> = Object.fromEntries(
      workers.flatMap((w) => (w.clock ? [[w.owner, w.clock]] : [])),
    );
    if (s.clocks.coordinator) clocks.coordinator = s.clocks.coordinator;
    const totalMs = options.seconds * 1_000;
    const plan = schedule({
      seed: options.seed,
      durationMs: totalMs,
      kinds: [
        ...SOAK_KINDS.filter(
          (kind) => (clockSkew || kind !== 'clock-skew') && (replicas === 0 || !NOT_WITH_REPLICAS.includes(kind)),
        ),
        ...(replicas > 0 ? REPLICA_SOAK_KINDS : []),
      ],
      targets: {
        partition: linkNames,
        blackhole: linkNames,
        'reply-loss': linkNames,
        'request-loss': linkNames,
        latency: linkNames,
        'reset-peer': linkNames,
        flap: linkNames,
        isolate: replicas === 0 ? [...owners, ...services] : services,
        pause: [...owners, ...services],
        crash: services,
        'clock-skew': Object.keys(clocks),
        'cut-from-etcd': s.cluster.replicas.map(({ name }) => name),
        // Apart from the majority's members (etcd-1, etcd-2), so the two never kill one member twice.
        'kill-etcd': ['etcd-3'],
      },
      faultMs: [300, 2_500],
      maxConcurrent: 2,
    });

    // A fault that fails ends the run: the faults still planned, and the
    // wait for the end, stop with it rather than hold the process open.
    const failed = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, failed.signal]) : failed.signal;
    // Every planned fault waits on it from the start of the run.
    setMaxListeners(0, signal);
    const startedAt = performance.now();
    let faults = 0;
    // The partial check reads the whole history so far: run at every tick,
    // a long run would spend time quadratic in its length on it. It runs
    // again only once ten times its last duration has passed, so it takes
    // at most a tenth of the run whatever its length; the count shown in
    // between is the last one found.
    let violationsSoFar = 0;
    let nextCheckAtMs = 0;
    const progress = setInterval(() => {
      const now = performance.now();
      if (now >= nextCheckAtMs) {
        violationsSoFar = checkHistory(
          { operations: s.operations, final: { fences: {}, results: {} }, faults: s.faults },
          { partial: true, clockUncertaintyMs: s.clockUncertaintyMs },
        ).violations.length;
        nextCheckAtMs = now + 10 * (performance.now() - now);
      }
      options.onProgress?.({
        elapsedMs: Math.min(totalMs, now - startedAt),
        totalMs,
        operations: s.operations.length,
        faults,
        violations: violationsSoFar,
      });
    }, 500);
    // The plan keeps faults on one target apart in time, but a heal is not
    // instant (a restart takes a while): a fault waits for the one before it
    // on its target to be fully healed, or a pause could take the pid of a
    // coordinator that is still being restarted.
    const previousOn = new Map<string, Promise<void>>();
    const runs = plan.map((fault) => {
      const previous = previousOn.get(fault.target) ?? Promise.resolve();
      const run = (async () => {
        await until(startedAt + fault.atMs, signal);
        await previous;
        if (s.workerExits.length > 0) throw new Error(`a worker died: ${s.workerExits.join('; ')}`);
        const heal = await s.inject(
          nemesisFor(s.cluster, fault, {
            latencyMs: LATENCY_MS,
            pids,
            links,
            linksOf,
            rivalLinks,
            clocks,
            // From the plan, so a seed replays the rates too.
            clockRate: SOAK_CLOCK_RATES[fault.atMs % SOAK_CLOCK_RATES.length]!,
          }),
        );
        faults++;
        // In effect for its whole planned length, even if it struck late:
        // a rival coordinator takes longer to start than many faults last.
        const injectedAt = performance.now();
        await until(Math.max(startedAt + fault.atMs, injectedAt) + fault.durationMs, signal);
        await heal();
      })();
      previousOn.set(
        fault.target,
        run.catch(() => undefined),
      );
      return run;
    });
    try {
      await Promise.all([...runs, until(startedAt + totalMs, signal)]);
    } catch (error) {
      failed.abort(error);
      // Faults struck mid-injection finish it first (a restart included), so
      // the stop below heals them all and nothing starts after it.
      await Promise.allSettled(runs);
      throw error;
    } finally {
      clearInterval(progress);
    }
    const { history, violations, unchecked, clockUncertaintyMs, coordinatorClock } = await s.verdict();
    return {
      seed: options.seed,
      plan,
      history,
      violations,
      unchecked,
      clockUncertaintyMs,
      ...(coordinatorClock ? { coordinatorClock } : {}),
    };
  } finally {
    await s.stop();
  }
}

/** Resolves at `atMs` on performance.now(), or rejects with the signal's reason once it aborts. */
function until(atMs: number, signal?: AbortSignal): Promise<void> {
  return sleep(Math.max(0, atMs - performance.now()), signal);
}
