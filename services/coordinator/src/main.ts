// The composition root: LevelDB store → sink client → core → gRPC server →
// sweepers and metrics. `startCoordinator` runs a coordinator in-process
// (tests inject a FakeClock); `runCoordinator` is the `fencer coordinator`
// process around it, and the only code here that touches `process`.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Gauge } from 'prom-client';
import { announceReady, StartupError } from '@fencer/cli-kit';
import {
  authenticatorFor,
  createLogger,
  DEFAULT_LIMITS,
  registry,
  routeGrpcLogs,
  runUntilSignal,
  serveMetrics,
  silentLogger,
  OpenStreams,
  startGrpcServer,
  startTracing,
  stopTracingAfter,
  type CredentialsReload,
  type Logger,
  type MetricsEndpoint,
  type RunningServer,
} from '@fencer/server-kit';
import { NotLeaderError, StoreFailedError, systemClock, type Clock, type Phases } from '@fencer/common';
import { SERVICE_NAMES, fencing } from '@fencer/proto';
import type { EtcdLeadership } from './adapters/etcd-leadership.js';
import { EtcdStore, EtcdTimeoutError, type LeadershipGuard } from './adapters/etcd-store.js';
import { LevelStore } from './adapters/level-store.js';
import { SinkRouter } from './adapters/sink-router.js';
import { startSweeper, type Sweeper } from './adapters/sweeper.js';
import { Coordinator, type CoordinatorApi } from './core/coordinator.js';
import { LEASE_RULES, type LeaseRules } from './core/lease-table.js';
import { sinkFor, sinkSetChange } from './core/shards.js';
import type { SinkPort } from './core/sink-port.js';
import type { LeaseStore } from './core/store.js';
import type { CoordinatorConfig, EtcdConfig } from './config.js';
import { coordinatorHandlers } from './grpc/handlers.js';
import { notLeaderFailure } from './grpc/status.js';

/**
 * Programmatic seams of a coordinator started from code. No flag,
 * environment variable or config field reaches them: only the deliberately
 * broken variants of the chaos suite's negative controls (@fencer/variants)
 * use them.
 */
export interface CoordinatorSeams {
  /** Wraps the port the core advances sink fences through (L3 step 2, L8); default none. */
  readonly wrapSink?: (sink: SinkPort) => SinkPort;
  /** Wraps the core as the gRPC handlers call it; default none. */
  readonly wrapCore?: (core: CoordinatorApi) => CoordinatorApi;
  /** Wraps the store the core loads from and writes to (LevelDB or etcd); default none. */
  readonly wrapStore?: (store: LeaseStore) => LeaseStore;
  /** Replaces L4's and T1's arithmetic inside the core (LeaseRules), given the real rules; default none. */
  readonly wrapRules?: (rules: LeaseRules) => LeaseRules;
  /**
   * H2 and H5 broken, for a replica on etcd: its gate ignores the leader
   * lease and the election's depositions, so a term ends only when a
   * guarded store write fails (H3); until then it answers from memory
   * whatever needs no write, even long deposed. Default false.
   */
  readonly serveWithoutLeaderLease?: boolean;
  /**
   * H3 broken, for a replica on etcd: its store writes compare nothing, so
   * a write it began while it led lands even after its deposition. Its gate
   * (H2) still keeps it from answering as leader. Default false.
   */
  readonly unguardedStoreWrites?: boolean;
}

/** What an in-process coordinator may be given instead of the production defaults. */
export interface CoordinatorDeps extends CoordinatorSeams {
  /** Monotonic clock for every lease decision (L1); default `performance.now()`. */
  readonly clock?: Clock;
  /** Where the service logs; default silent (runCoordinator passes the JSON stderr logger). */
  readonly log?: Logger;
  /** Grant ids for AdvanceFence; default random UUIDs. */
  readonly newGrantId?: () => string;
  /** How often (real ms) the L8 sweep looks for expired leases; default 100. */
  readonly fenceSweepIntervalMs?: number;
  /** Records each grant's L3 steps (as trace spans); default nothing. */
  readonly phases?: Phases;
}

/** A coordinator running in this process. */
export interface RunningCoordinator {
  /** HOST:PORT actually bound. */
  readonly address: string;
  /** HOST:PORT of /metrics, when configured. */
  readonly metricsAddress: string | undefined;
  /**
   * Stops sweeps and the server (letting calls finish), waits for every core
   * operation still running (even one whose caller gave up), then closes the
   * sink channel and the store. Idempotent.
   */
  stop(): Promise<void>;
  /** Re-reads the credentials file for every later call, open connections included; a bad file changes nothing. */
  reloadCredentials(): CredentialsReload;
  /**
   * Resolves with the cause if the LevelDB store fails (fail-stop, T3); every
   * call is then STORAGE_UNAVAILABLE. Never resolves for a replica on etcd,
   * whose store failure ends only its leadership term (H6).
   */
  readonly storeFailed: Promise<Error>;
}

// Created once per process: prom-client refuses duplicate metric names, and
// tests may run several coordinators in one process (the gauge sums them).
const residencyOf = new Set<Coordinator>();
let residencyGauge: Gauge<'state'> | undefined;

/** V4: counts `core`'s resource entries on /metrics until the returned function is called. */
function gaugeResidency(core: Coordinator): () => void {
  residencyGauge ??= new Gauge({
    name: 'fencer_coordinator_resource_entries',
    help: 'Resource entries in memory: active (a valid lease, or a fence L8 owes) and idle (a cache bounded by --max-idle-resources)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      let resident = 0;
      let idle = 0;
      for (const running of residencyOf) {
        const counts = running.residency();
        resident += counts.resident;
        idle += counts.idle;
      }
      this.set({ state: 'active' }, resident - idle);
      this.set({ state: 'idle' }, idle);
    },
  });
  residencyOf.add(core);
  return () => residencyOf.delete(core);
}

/** Loads `store` into a new core (L7: surviving grants valid for a full TTL from now; H4 on a takeover). */
function openCore(
  config: CoordinatorConfig,
  deps: CoordinatorDeps,
  store: LeaseStore,
  sink: SinkPort,
  log: Logger,
): Promise<Coordinator> {
  return Coordinator.open({
    clock: deps.clock ?? systemClock,
    store: deps.wrapStore?.(store) ?? store,
    sink,
    newGrantId: deps.newGrantId ?? randomUUID,
    requestRetentionMs: config.requestRetentionMs,
    limits: config.coreLimits,
    fenceOnExpiry: config.fenceOnExpiry,
    log,
    rules: deps.wrapRules?.(LEASE_RULES) ?? LEASE_RULES,
    ...(deps.phases === undefined ? {} : { phases: deps.phases }),
  });
}

/**
 * The periodic tasks of one core: L8's fence sweep (when on) and R3's
 * collection, each run skipped while `active` says no (a replica whose
 * leadership is unconfirmed must not fence holders the leader renewed, H2).
 */
function startSweepers(
  config: CoordinatorConfig,
  deps: CoordinatorDeps,
  core: Coordinator,
  log: Logger,
  active: () => boolean = () => true,
): Sweeper[] {
  const onSweepError = (what: string) => (error: unknown) => log.error({ err: error }, `${what} sweep failed`);
  const whenActive = (task: () => Promise<unknown>) => () => (active() ? task() : Promise.resolve());
  const sweepers: Sweeper[] = [];
  if (config.fenceOnExpiry) {
    sweepers.push(
      startSweeper(
        deps.fenceSweepIntervalMs ?? 100,
        whenActive(() => core.fenceExpiredLeases()),
        onSweepError('fence-on-expiry'),
      ),
    );
  }
  // R3: lookups ignore records past retention anyway; this only frees their
  // space, and that of resource entries idle past the cache bound (V4).
  const collectEveryMs = Math.min(60_000, Math.max(1_000, Math.floor(config.requestRetentionMs / 10)));
  sweepers.push(
    startSweeper(
      collectEveryMs,
      whenActive(() => core.collectRequests()),
      onSweepError('request-record'),
    ),
  );
  return sweepers;
}

/** A replica's gRPC server: the protocol service NOT_SERVING until it leads (H2). */
function serveCoordinator(
  config: CoordinatorConfig,
  api: CoordinatorApi,
  authenticator: ReturnType<typeof authenticatorFor>,
  log: Logger,
  serving = true,
): Promise<RunningServer> {
  const streams = new OpenStreams();
  return startGrpcServer({
    serviceName: SERVICE_NAMES.coordinator,
    listen: config.listen,
    tls: config.tls,
    definition: fencing.Coordinator.service,
    handlers: coordinatorHandlers(api, {
      log,
      limits: DEFAULT_LIMITS,
      sinkOf: (resource) => sinkFor(resource, config.sinks),
      streams,
      authenticator,
    }),
    streams,
    authenticator,
    // V2: far above any valid request, so an oversize id is answered
    // INVALID_ARGUMENT naming it; bounded after decompression.
    maxReceiveMessageBytes: 2 * 1024 * 1024, // grpc-js holds at most twice this per call (server.ts)
    connectionLimits: config.connectionLimits,
    serving,
    log,
  });
}

/**
 * Opens the store in `config.dataDir`, loads it (L7), and serves
 * fencing.v1.Coordinator on `config.listen`. Rejects with StartupError
 * (data dir locked or unusable, address in use) and leaves nothing open.
 */
export async function startCoordinator(
  config: CoordinatorConfig,
  deps: CoordinatorDeps = {},
): Promise<RunningCoordinator> {
  if (config.etcd !== null) return startReplica(config, config.etcd, deps);
  const log = deps.log ?? silentLogger;
  const store = await LevelStore.open(config.dataDir, { repair: config.repair, log });
  try {
    await claimSinks(store, config);
  } catch (error) {
    await store.close();
    throw error;
  }
  const sink = new SinkRouter(config.sinks, {
    token: config.sinkToken,
    tls: config.sinkTls,
    deadlineMs: config.sinkDeadlineMs,
  });
  const authenticator = authenticatorFor(config.auth);
  let core: Coordinator | undefined;
  let server: RunningServer | undefined;
  let metricsServer: MetricsEndpoint | undefined;
  let ungauge: (() => void) | undefined;
  const sweepers: Sweeper[] = [];
  try {
    const opened = await openCore(config, deps, store, deps.wrapSink?.(sink) ?? sink, log);
    core = opened;
    server = await serveCoordinator(config, deps.wrapCore?.(opened) ?? opened, authenticator, log);
    if (config.metrics !== undefined) {
      metricsServer = await serveMetrics(config.metrics);
      ungauge = gaugeResidency(opened);
    }
    sweepers.push(...startSweepers(config, deps, opened, log));
  } catch (error) {
    ungauge?.();
    await Promise.all(sweepers.map((s) => s.stop()));
    await server?.stop(0);
    sink.close();
    await store.close();
    throw error;
  }
  if (config.auth.kind === 'insecure')
    log.warn('running with --insecure: any caller may acquire any lease as anyone (A2/A3 off)');
  let stopping: Promise<void> | undefined;
  const running = { core, server, metricsServer };
  return {
    address: running.server.address,
    metricsAddress: running.metricsServer?.address,
    reloadCredentials: () => authenticator.reload(),
    storeFailed: store.whenFailed(),
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all(sweepers.map((s) => s.stop()));
        await running.server.stop();
        // A call whose client gave up no longer holds the server open, but its
        // Acquire may still be between the sink and the store.
        await running.core.close();
        ungauge?.();
        await running.metricsServer?.close();
        sink.close();
        await store.close();
      })()),
  };
}

/** How long a replica's first etcd call may take before the process gives up (exit 1, one line). */
/** How long a replica waits before it asks an etcd that refused it at start again. */
const STARTUP_RETRY_MS = 250;

/**
 * P2: records the sink names at first start, and refuses (StartupError) a
 * start with another set than the one recorded: resources would move
 * between sinks without a fenced hand-over.
 */
async function claimSinks(store: LeaseStore, config: CoordinatorConfig): Promise<void> {
  const change = sinkSetChange(
    await store.claimSinkNames(config.sinks.map((sink) => sink.name)),
    config.sinks.map((sink) => sink.name),
  );
  if (change !== undefined) throw new StartupError(change);
}

/**
 * etcd3 and the election module that needs it, loaded only by a replica
 * (`--store etcd`): every `fencer` process loads this module, and etcd3
 * costs each ~0.12 s of start-up on top of grpc-js.
 */
const loadEtcd3 = () => import('etcd3');

const etcdHosts = (etcd: EtcdConfig) => etcd.endpoints.map((endpoint) => `http://${endpoint}`);

/**
 * Checks (or stamps) the prefix, and claims the sink names (P2), once
 * before a replica campaigns: one pointed at another format or set of
 * sinks, or at an etcd that does not answer within --etcd-wait-ms, stops
 * here with StartupError. An etcd that refuses connections or does not
 * answer a try within `attemptMs` (cut off, or without a quorum) is asked
 * again until then, each time with a client of its own (etcd3's circuit
 * breaker would refuse the next tries for 5 s): a replica restarted while
 * cut from etcd, or while etcd restarts, starts once it reaches it, as a
 * running one resumes (H6). No log: its failure is the one line the process
 * exits with.
 */
async function probeEtcd(config: CoordinatorConfig, etcd: EtcdConfig, attemptMs: number): Promise<void> {
  const { Etcd3, isRecoverableError } = await loadEtcd3();
  const deadline = performance.now() + etcd.waitMs;
  for (;;) {
    const client = new Etcd3({ hosts: etcdHosts(etcd) });
    try {
      const callTimeoutMs = Math.max(1, Math.min(attemptMs, deadline - performance.now()));
      const probe = await EtcdStore.open({ client, prefix: etcd.prefix, callTimeoutMs });
      try {
        await claimSinks(probe, config);
      } finally {
        await probe.close();
      }
      return;
    } catch (error) {
      if (!(error instanceof StoreFailedError)) throw error;
      const cause = error.cause instanceof Error ? error.cause : error;
      const retryable = isRecoverableError(cause) || cause instanceof EtcdTimeoutError;
      if (!retryable || performance.now() + STARTUP_RETRY_MS >= deadline) {
        throw new StartupError(
          `etcd at ${etcd.endpoints.join(',')} did not serve prefix ${etcd.prefix}: ${cause.message.trim()}`,
        );
      }
    } finally {
      client.close();
    }
    await sleep(STARTUP_RETRY_MS);
  }
}

/** One leadership term of a replica: a core over an EtcdStore guarded by the election it won (H3, H4). */
interface Term {
  readonly guard: LeadershipGuard;
  readonly store: EtcdStore;
  readonly core: Coordinator;
  readonly api: CoordinatorApi;
  readonly sweepers: Sweeper[];
  readonly ungauge: (() => void) | undefined;
}

/**
 * A coordinator replica on etcd (H1–H6): serves on `config.listen` from the
 * start, but answers NOT_LEADER (naming the leader when known) unless it
 * holds the election with its leadership confirmed (H2). Each won election
 * opens a term: an EtcdStore guarded by it (H3), a core that loads the whole
 * state before the first call reaches it (H4, L7 from the takeover). A
 * deposition, a leader lease run out or a failed store ends the term and the
 * replica campaigns again; the process never stops for those (H6). Rejects
 * with StartupError when etcd does not answer, or the prefix holds another
 * format, before anything is served.
 */
async function startReplica(
  config: CoordinatorConfig,
  etcd: EtcdConfig,
  deps: CoordinatorDeps,
): Promise<RunningCoordinator> {
  const log = deps.log ?? silentLogger;
  const clock = deps.clock ?? systemClock;
  // Bounds a hung etcd call, so that a term whose etcd is gone ends and its
  // calls are answered. Not what keeps a replica from serving without etcd:
  // the gate does that at its leader lease (H2, H6), so a slow but live etcd
  // (a loaded disk) may take longer than the session TTL without ending a term.
  const callTimeoutMs = 2 * etcd.leaderTtlMs;
  // A try gets a session TTL, so the wait holds a few: a live etcd answers well within it.
  await probeEtcd(config, etcd, etcd.leaderTtlMs);
  const { Etcd3 } = await loadEtcd3();
  const { EtcdLeadership } = await import('./adapters/etcd-leadership.js');
  const client = new Etcd3({ hosts: etcdHosts(etcd) });
  const sink = new SinkRouter(config.sinks, {
    token: config.sinkToken,
    tls: config.sinkTls,
    deadlineMs: config.sinkDeadlineMs,
  });
  const corePort = deps.wrapSink?.(sink) ?? sink;
  const authenticator = authenticatorFor(config.auth);

  let current: Term | undefined;
  let stopping = false;
  // Terms open and close one at a time, in the order leadership changed.
  let transitions: Promise<void> = Promise.resolve();
  const enqueue = (step: () => Promise<void>) => {
    transitions = transitions.then(step).catch((error: unknown) => log.error({ err: error }, 'term change failed'));
  };
  // Started once the server listens: its address is the default --advertise.
  const election: { leadership?: EtcdLeadership } = {};
  const leaderAddress = () => election.leadership?.leaderAddress();
  const withoutLeaderLease = deps.serveWithoutLeaderLease === true;
  const confirmed = (term: Term) =>
    current === term && (withoutLeaderLease || election.leadership?.isConfirmed() === true);

  /** H2: a call reaches the core only under a confirmed term, and is answered only if the term is still confirmed. */
  const gated = async <T>(call: (api: CoordinatorApi) => Promise<T>): Promise<T> => {
    const term = current;
    if (term === undefined || !confirmed(term)) throw notLeaderFailure(leaderAddress());
    let answer: T;
    try {
      answer = await call(term.api);
    } catch (error) {
      // A failed store (a failed guard included, H3) ends the term: never an answer as if granted.
      if (!confirmed(term) || error instanceof StoreFailedError) throw notLeaderFailure(leaderAddress());
      throw error;
    }
    if (!confirmed(term)) throw notLeaderFailure(leaderAddress());
    return answer;
  };
  const api: CoordinatorApi = {
    acquire: (params) => gated((core) => core.acquire(params)),
    renew: (params) => gated((core) => core.renew(params)),
    release: (params) => gated((core) => core.release(params)),
    describe: (resource) => gated((core) => core.describe(resource)),
    nextToken: (resource) => gated((core) => core.nextToken(resource)),
    forceRelease: (resource, token, by) => gated((core) => core.forceRelease(resource, token, by)),
  };

  let server: RunningServer | undefined;
  let metricsServer: MetricsEndpoint | undefined;
  try {
    server = await serveCoordinator(config, api, authenticator, log, false);
    if (config.metrics !== undefined) metricsServer = await serveMetrics(config.metrics);
  } catch (error) {
    await server?.stop(0);
    sink.close();
    client.close();
    throw error;
  }
  const running = { server, metricsServer };

  const closeTerm = async (term: Term) => {
    await Promise.all(term.sweepers.map((s) => s.stop()));
    // Its calls in progress finish (bounded by the sink's deadline) and are answered NOT_LEADER.
    await term.core.close();
    term.ungauge?.();
    await term.store.close();
  };
  const endTerm = (reason: string) => {
    const term = current;
    if (term === undefined) return;
    current = undefined;
    running.server.setServing(false);
    log.warn({ reason, createRevision: term.guard.createRevision }, 'leadership term ended; serving NOT_LEADER');
    enqueue(() => closeTerm(term));
  };
  const openTerm = async (guard: LeadershipGuard) => {
    if (stopping || election.leadership?.guard() !== guard) return;
    let term: Term;
    try {
      const store = await EtcdStore.open({
        client,
        prefix: etcd.prefix,
        ...(deps.unguardedStoreWrites === true ? {} : { guard }),
        log,
        callTimeoutMs,
      });
      try {
        const core = await openCore(config, deps, store, corePort, log);
        const opened: Term = {
          guard,
          store,
          core,
          api: deps.wrapCore?.(core) ?? core,
          // Sweeps run only while this term is the confirmed one.
          sweepers: startSweepers(config, deps, core, log, () => confirmed(opened)),
          ungauge: config.metrics === undefined ? undefined : gaugeResidency(core),
        };
        term = opened;
      } catch (error) {
        await store.close();
        throw error;
      }
    } catch (error) {
      const deposed = error instanceof StoreFailedError && error.cause instanceof NotLeaderError;
      log[deposed ? 'warn' : 'error']({ err: error }, 'could not take over the store; campaigning again');
      election.leadership?.resign(guard);
      return;
    }
    if (stopping || election.leadership?.guard() !== guard) {
      await closeTerm(term);
      return;
    }
    // Only a replica serving without its leader lease still has a term here: it outlived its deposition.
    endTerm('elected again');
    current = term;
    running.server.setServing(true);
    log.info({ createRevision: guard.createRevision }, 'leading: state loaded from etcd, serving (H4)');
    void term.store.whenFailed().then((failure) => {
      if (current !== term) return;
      const deposed = failure.cause instanceof NotLeaderError;
      log[deposed ? 'warn' : 'error']({ err: failure }, deposed ? 'deposed (H3)' : 'etcd store failed (H6)');
      endTerm(deposed ? 'deposed' : 'store failed');
      election.leadership?.resign(guard);
    });
  };

  const leadership = EtcdLeadership.start({
    client,
    prefix: etcd.prefix,
    advertise: etcd.advertise ?? running.server.address,
    ttlMs: etcd.leaderTtlMs,
    clock,
    log,
    onElected: (guard) => enqueue(() => openTerm(guard)),
    onDeposed: (reason) => {
      if (!withoutLeaderLease) endTerm(reason);
    },
  });
  election.leadership = leadership;

  let stopped: Promise<void> | undefined;
  return {
    address: running.server.address,
    metricsAddress: running.metricsServer?.address,
    reloadCredentials: () => authenticator.reload(),
    // H6: a replica's store failure ends its term, never the process.
    storeFailed: new Promise<Error>(() => undefined),
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        await running.server.stop();
        // Resigning revokes the session: a standby takes over at once.
        await leadership.stop();
        endTerm('stopping');
        await transitions;
        await running.metricsServer?.close();
        sink.close();
        client.close();
      })()),
  };
}

/**
 * `fencer coordinator`: prints the ready line and runs until SIGTERM/SIGINT
 * (exit 0); SIGHUP reloads --credentials; a failed LevelDB store (T3)
 * answers the calls in progress STORAGE_UNAVAILABLE and exits 1
 * (runUntilSignal). A replica on etcd prints the ready line once it listens,
 * leading or not, and outlives its store's failures (H6).
 */
export async function runCoordinator(config: CoordinatorConfig, seams: CoordinatorSeams = {}): Promise<void> {
  const log = createLogger('coordinator');
  routeGrpcLogs(log);
  if (config.auth.kind === 'credentials' && config.sinkToken === null && config.sinkTls?.cert === undefined) {
    // A secured deployment almost always has a secured sink; without a token
    // (or a client certificate, A2) every Acquire would fail SINK_UNAVAILABLE
    // (sink_code UNAUTHENTICATED).
    log.warn(
      'callers must authenticate but neither --sink-token-file nor --sink-tls-cert was given: the sink will see this coordinator as anonymous',
    );
  }
  await runUntilSignal('coordinator', log, async () => {
    const tracing = await startTracing('coordinator', config.traceFile);
    const coordinator = stopTracingAfter(
      await startCoordinator(config, { ...seams, log, ...(tracing ? { phases: tracing.phases } : {}) }),
      tracing,
    );
    log.info(
      {
        address: coordinator.address,
        ...(config.etcd === null
          ? { dataDir: config.dataDir }
          : { store: 'etcd', etcd: config.etcd.endpoints, etcdPrefix: config.etcd.prefix }),
        sinks: config.sinks.map(({ name, address }) => `${name}=${address}`),
        sinkTls: config.sinkTls === undefined ? 'off' : config.sinkTls.cert ? 'mutual' : 'on',
        auth: config.auth.kind,
        fenceOnExpiry: config.fenceOnExpiry,
        metrics: coordinator.metricsAddress,
      },
      'coordinator ready',
    );
    announceReady('coordinator', coordinator.address);
    return coordinator;
  });
}
