// The composition root: LevelDB store → sink client → core → gRPC server →
// sweepers and metrics. `startCoordinator` runs a coordinator in-process
// (tests inject a FakeClock); `runCoordinator` is the `fencer coordinator`
// process around it, and the only code here that touches `process`.
import { randomUUID } from 'node:crypto';
import { Gauge } from 'prom-client';
import {
  announceReady,
  authenticatorFor,
  createLogger,
  DEFAULT_LIMITS,
  registry,
  routeGrpcLogs,
  runUntilSignal,
  serveMetrics,
  silentLogger,
  startGrpcServer,
  type CredentialsReload,
  type Logger,
  type MetricsEndpoint,
  type RunningServer,
} from '@fencer/server-kit';
import { systemClock, type Clock } from '@fencer/common';
import { SERVICE_NAMES, fencing } from '@fencer/proto';
import { LevelStore } from './adapters/level-store.js';
import { GrpcSinkClient } from './adapters/sink-client.js';
import { startSweeper, type Sweeper } from './adapters/sweeper.js';
import { Coordinator, type CoordinatorApi } from './core/coordinator.js';
import type { SinkPort } from './core/sink-port.js';
import type { CoordinatorConfig } from './config.js';
import { coordinatorHandlers } from './grpc/handlers.js';

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
  /** Resolves with the cause if the store fails (fail-stop, T3); every call is then STORAGE_UNAVAILABLE. */
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

/**
 * Opens the store in `config.dataDir`, loads it (L7), and serves
 * fencing.v1.Coordinator on `config.listen`. Rejects with StartupError
 * (data dir locked or unusable, address in use) and leaves nothing open.
 */
export async function startCoordinator(
  config: CoordinatorConfig,
  deps: CoordinatorDeps = {},
): Promise<RunningCoordinator> {
  const log = deps.log ?? silentLogger;
  const store = await LevelStore.open(config.dataDir, { repair: config.repair, log });
  const sink = new GrpcSinkClient({
    address: config.sink,
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
    const opened = await Coordinator.open({
      clock: deps.clock ?? systemClock,
      store,
      sink: deps.wrapSink?.(sink) ?? sink,
      newGrantId: deps.newGrantId ?? randomUUID,
      requestRetentionMs: config.requestRetentionMs,
      limits: config.coreLimits,
      fenceOnExpiry: config.fenceOnExpiry,
      log,
    });
    core = opened;
    server = await startGrpcServer({
      serviceName: SERVICE_NAMES.coordinator,
      listen: config.listen,
      tls: config.tls,
      definition: fencing.Coordinator.service,
      handlers: coordinatorHandlers(deps.wrapCore?.(opened) ?? opened, { log, limits: DEFAULT_LIMITS }),
      authenticator,
      // V2: far above any valid request, so an oversize id is answered
      // INVALID_ARGUMENT naming it; bounded after decompression.
      maxReceiveMessageBytes: 2 * 1024 * 1024, // grpc-js holds at most twice this per call (server.ts)
      connectionLimits: config.connectionLimits,
      log,
    });
    if (config.metrics !== undefined) {
      metricsServer = await serveMetrics(config.metrics);
      ungauge = gaugeResidency(opened);
    }
    const onSweepError = (what: string) => (error: unknown) => log.error({ err: error }, `${what} sweep failed`);
    if (config.fenceOnExpiry) {
      sweepers.push(
        startSweeper(
          deps.fenceSweepIntervalMs ?? 100,
          () => opened.fenceExpiredLeases(),
          onSweepError('fence-on-expiry'),
        ),
      );
    }
    // R3: lookups ignore records past retention anyway; this only frees their
    // space, and that of resource entries idle past the cache bound (V4).
    const collectEveryMs = Math.min(60_000, Math.max(1_000, Math.floor(config.requestRetentionMs / 10)));
    sweepers.push(startSweeper(collectEveryMs, () => opened.collectRequests(), onSweepError('request-record')));
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

/**
 * `fencer coordinator`: prints the ready line and runs until SIGTERM/SIGINT
 * (exit 0); SIGHUP reloads --credentials; a failed store (T3) answers the
 * calls in progress STORAGE_UNAVAILABLE and exits 1 (runUntilSignal).
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
    const coordinator = await startCoordinator(config, { ...seams, log });
    log.info(
      {
        address: coordinator.address,
        dataDir: config.dataDir,
        sink: config.sink,
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
