// The composition root: LevelDB store → sink client → core → gRPC server →
// sweepers and metrics. `startCoordinator` runs a coordinator in-process
// (tests inject a FakeClock); `runCoordinator` is the `fencer coordinator`
// process around it, and the only code here that touches `process`.
import { randomUUID } from 'node:crypto';
import {
  announceReady,
  authenticatorFor,
  createLogger,
  DEFAULT_LIMITS,
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
import { Coordinator } from './core/coordinator.js';
import type { CoordinatorConfig } from './config.js';
import { coordinatorHandlers } from './grpc/handlers.js';

/** What an in-process coordinator may be given instead of the production defaults. */
export interface CoordinatorDeps {
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
  const sweepers: Sweeper[] = [];
  try {
    const opened = await Coordinator.open({
      clock: deps.clock ?? systemClock,
      store,
      sink,
      newGrantId: deps.newGrantId ?? randomUUID,
      requestRetentionMs: config.requestRetentionMs,
      log,
    });
    core = opened;
    server = await startGrpcServer({
      serviceName: SERVICE_NAMES.coordinator,
      listen: config.listen,
      tls: config.tls,
      register: (s) =>
        s.addService(
          fencing.Coordinator.service,
          coordinatorHandlers(opened, { authenticator, log, limits: DEFAULT_LIMITS }),
        ),
      // Far above any valid request, so an oversize id is answered INVALID_ARGUMENT naming it.
      maxReceiveMessageBytes: 4 * 1024 * 1024,
      log,
    });
    if (config.metrics !== undefined) metricsServer = await serveMetrics(config.metrics);
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
    // R3: lookups ignore records past retention anyway; this only frees their space.
    const collectEveryMs = Math.min(60_000, Math.max(1_000, Math.floor(config.requestRetentionMs / 10)));
    sweepers.push(startSweeper(collectEveryMs, () => opened.collectRequests(), onSweepError('request-record')));
  } catch (error) {
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
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all(sweepers.map((s) => s.stop()));
        await running.server.stop();
        // A call whose client gave up no longer holds the server open, but its
        // Acquire may still be between the sink and the store.
        await running.core.close();
        await running.metricsServer?.close();
        sink.close();
        await store.close();
      })()),
  };
}

/** `fencer coordinator`: prints the ready line and runs until SIGTERM/SIGINT (exit 0); SIGHUP reloads --credentials. */
export async function runCoordinator(config: CoordinatorConfig): Promise<void> {
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
    const coordinator = await startCoordinator(config, { log });
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
