// The composition root: store → engine → gRPC server → metrics. `startSink`
// runs a sink in-process; `runSink` is the `fencer sink` process around it,
// and the only code here that touches `process`.
import { Counter, Histogram } from 'prom-client';
import { announceReady } from '@fencer/cli-kit';
import {
  authenticatorFor,
  createLogger,
  DEFAULT_LIMITS,
  OpenStreams,
  registry,
  routeGrpcLogs,
  runUntilSignal,
  serveMetrics,
  silentLogger,
  startGrpcServer,
  startTracing,
  stopTracingAfter,
  type CredentialsReload,
  type Logger,
  type MetricsEndpoint,
  type RunningServer,
} from '@fencer/server-kit';
import type * as grpc from '@grpc/grpc-js';
import type { Phases } from '@fencer/common';
import { SERVICE_NAMES, fencing } from '@fencer/proto';
import { openLevelStore } from './adapters/level-store.js';
import { SinkEngine, type SinkApi } from './core/sink-engine.js';
import { decideWrite } from './core/fence-policy.js';
import type { SinkStore } from './core/store.js';
import type { SinkConfig } from './config.js';
import { sinkHandlers } from './grpc/handlers.js';

/**
 * Programmatic seams of a sink started from code. No flag, environment
 * variable or config field reaches them: only the deliberately broken
 * variants of the chaos suite's negative controls (@fencer/variants) use them.
 */
export interface SinkSeams {
  /** Builds the engine the gRPC handlers call, over the opened store; default the real SinkEngine. */
  readonly engine?: (store: SinkStore) => SinkApi;
  /** Server interceptors outside the call gate, which see every status the sink sends; default none. */
  readonly interceptors?: readonly grpc.ServerInterceptor[];
}

/** A sink running in this process. */
export interface RunningSink {
  /** HOST:PORT actually bound. */
  readonly address: string;
  /** HOST:PORT of /metrics, when configured. */
  readonly metricsAddress: string | undefined;
  /** Resolves with the cause if the store fails (fail-stop, T3); the sink then answers STORAGE_UNAVAILABLE. */
  readonly storeFailed: Promise<Error>;
  /** Stops the server (letting calls finish), then closes the store. Idempotent. */
  stop(): Promise<void>;
  /**
   * Re-reads the credentials file for every later call, open connections
   * included, and for the next message of every open WriteStream (A7); a bad
   * file changes nothing.
   */
  reloadCredentials(): CredentialsReload;
}

// Created once per process: prom-client refuses duplicate metric names, and
// tests may run several sinks in one process.
let storeMetrics: { batches: Counter; batchOps: Histogram } | undefined;
function sinkStoreMetrics() {
  storeMetrics ??= {
    batches: new Counter({
      name: 'fencer_sink_commit_batches_total',
      help: 'Synced LevelDB batches (group commits)',
      registers: [registry],
    }),
    batchOps: new Histogram({
      name: 'fencer_sink_commit_batch_ops',
      help: 'Ops per synced batch (how much group commit gathers)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [registry],
    }),
  };
  return storeMetrics;
}

/**
 * Opens the store in `config.dataDir` and serves fencing.v1.Sink on
 * `config.listen`. Rejects with StartupError (data dir locked or unusable,
 * address in use) and leaves nothing open behind.
 */
export async function startSink(
  config: SinkConfig,
  options: { log?: Logger; phases?: Phases } & SinkSeams = {},
): Promise<RunningSink> {
  const log = options.log ?? silentLogger;
  const metrics = sinkStoreMetrics();
  const { store } = await openLevelStore(config.dataDir, {
    repair: config.repair,
    log,
    onBatchDurable: ({ ops }) => {
      metrics.batches.inc();
      metrics.batchOps.observe(ops);
    },
  });
  const storeFailed = store.whenFailed();
  const engine = options.engine?.(store) ?? new SinkEngine(store, decideWrite, options.phases);
  const authenticator = authenticatorFor(config.auth);
  const limits = { ...DEFAULT_LIMITS, maxPayloadBytes: config.maxPayloadBytes };
  const streams = new OpenStreams();
  let server: RunningServer | undefined;
  let metricsServer: MetricsEndpoint | undefined;
  try {
    server = await startGrpcServer({
      serviceName: SERVICE_NAMES.sink,
      listen: config.listen,
      tls: config.tls,
      definition: fencing.Sink.service,
      handlers: sinkHandlers(engine, { log, limits, streams, authenticator }),
      streams,
      authenticator,
      // V2: above the payload limit, so an oversize payload reaches
      // validation and is answered INVALID_ARGUMENT naming `payload`; a
      // request past this bound after decompression (2 MiB by default) is
      // RESOURCE_EXHAUSTED MESSAGE_TOO_LARGE, unread (V4); past twice it,
      // grpc-js's bare RESOURCE_EXHAUSTED: the price of never inflating
      // unbounded input. Twice this (4 MiB) is what one call may make the
      // sink hold before it is judged, as before the gate gave a reason.
      maxReceiveMessageBytes: Math.max(2 * 1024 * 1024, 2 * config.maxPayloadBytes),
      connectionLimits: config.connectionLimits,
      ...(options.interceptors === undefined ? {} : { interceptors: options.interceptors }),
      log,
    });
    if (config.metrics !== undefined) metricsServer = await serveMetrics(config.metrics);
  } catch (error) {
    await server?.stop(0);
    await store.close();
    throw error;
  }
  if (config.auth.kind === 'insecure') log.warn('running with --insecure: any caller may advance fences (A1 off)');
  const grpcServer = server;
  let stopping: Promise<void> | undefined;
  return {
    address: grpcServer.address,
    metricsAddress: metricsServer?.address,
    storeFailed,
    reloadCredentials: () => authenticator.reload(),
    stop: () =>
      (stopping ??= (async () => {
        // Calls in progress finish (and get their durable answers) before the store closes.
        await grpcServer.stop();
        await metricsServer?.close();
        await store.close();
      })()),
  };
}

/**
 * `fencer sink`: runs until SIGTERM/SIGINT (exit 0), reloads --credentials on SIGHUP, and prints the ready
 * line. If the store fails, the calls in progress are answered
 * STORAGE_UNAVAILABLE and the process exits 1 (runUntilSignal): its
 * in-memory state can no longer be trusted, and a restart recovers from disk.
 */
export async function runSink(config: SinkConfig, seams: SinkSeams = {}): Promise<void> {
  const log = createLogger('sink');
  routeGrpcLogs(log);
  await runUntilSignal('sink', log, async () => {
    const tracing = await startTracing('sink', config.traceFile);
    const sink = stopTracingAfter(
      await startSink(config, { ...seams, log, ...(tracing ? { phases: tracing.phases } : {}) }),
      tracing,
    );
    log.info(
      { address: sink.address, dataDir: config.dataDir, auth: config.auth.kind, metrics: sink.metricsAddress },
      'sink ready',
    );
    announceReady('sink', sink.address, sink.metricsAddress === undefined ? {} : { metrics: sink.metricsAddress });
    return sink;
  });
}
