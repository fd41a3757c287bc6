// OpenTelemetry for both services: off unless asked for, so an untraced
// server pays nothing per call. The grpc-js instrumentation makes a span of
// every call and carries the trace context in its metadata, which is what
// joins a coordinator's Acquire to the sink's AdvanceFence across processes.
//
// Only the API is imported up front: every `fencer` process loads this
// module, and the SDK (hundreds of ms to load) is imported only by a
// process that traces.
import { appendFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
// The subpath, not the package: @fencer/proto's index loads the grpc-js
// client classes, which must wait until hookGrpc has patched grpc-js.
import { endedWith } from '@fencer/proto/message-span';
import type { Phases } from '@fencer/common';
import { ConfigError } from '@fencer/cli-kit';

/** The OTEL_* variables that ask for spans over OTLP (OTEL_SDK_DISABLED still wins). */
export function otlpRequested(env: NodeJS.ProcessEnv): boolean {
  const exporters = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporters !== undefined && exporters !== '') return exporters !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Tracing of a running server; `shutdown` exports what is still buffered. */
export interface Tracing {
  /** How the servers record their phases: as spans. */
  readonly phases: Phases;
  shutdown(): Promise<void>;
}

/**
 * Starts tracing for `service` when `traceFile` is given (spans go there,
 * instead of over OTLP) or the OTEL_* environment asks for it (exporter,
 * endpoint and protocol as the OpenTelemetry spec defines them); otherwise
 * does nothing and returns undefined. Call before the server starts.
 */
export async function startTracing(
  service: string,
  traceFile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Tracing | undefined> {
  if (traceFile === undefined && !otlpRequested(env)) return undefined;
  if (traceFile !== undefined) {
    // Fail at start, not at the first export: the file must be writable.
    await appendFile(traceFile, '').catch((error: unknown) => {
      throw new ConfigError(`--trace-file ${traceFile}: ${(error as Error).message}`);
    });
  }
  await hookGrpc();
  const [{ NodeSDK }, { BatchSpanProcessor }, { JsonLinesSpanExporter }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('./trace-file.js'),
  ]);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? `fencer-${service}`,
    ...(traceFile === undefined
      ? {}
      : { spanProcessors: [new BatchSpanProcessor(new JsonLinesSpanExporter(traceFile))] }),
  });
  sdk.start();
  return { phases: spanPhases, shutdown: () => sdk.shutdown() };
}

let grpcHooked = false;

/**
 * Instruments grpc-js, once per process. Its spans record nothing until
 * startTracing registers a tracer provider. Call it before anything imports
 * grpc-js (the `fencer` entry point does, when tracingAsked): client classes
 * are built when @fencer/proto is imported, and only a grpc-js patched by then
 * gives them client spans and trace-context metadata. Called later, only the
 * server side is traced.
 */
export async function hookGrpc(): Promise<void> {
  if (grpcHooked) return;
  grpcHooked = true;
  const { GrpcInstrumentation } = await import('@opentelemetry/instrumentation-grpc');
  // Health probes would bury the calls that matter; a stream of
  // AdvanceFences (or a worker's LeaseStream) lives as long as its caller,
  // and each of its messages gets a span of its own (messageSpan, inCarriedTrace).
  new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch', 'AdvanceFenceStream', 'LeaseStream'] });
  // The instrumentation patches a module when it is require()d, but our
  // modules are ESM, whose imports of grpc-js bypass require(). Requiring it
  // here patches the one shared copy, which later ESM imports then see.
  createRequire(import.meta.url)('@grpc/grpc-js');
}

/**
 * Whether `fencer <argv>` is a server or a worker that may trace
 * (--trace-file, its FENCER_<COMMAND>_TRACE_FILE, or OTEL_*): decided
 * before commander parses anything, so generous; a wrong yes costs only an
 * unrecorded span per call.
 */
export function tracingAsked(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const service = argv[2];
  if (service !== 'sink' && service !== 'coordinator' && service !== 'worker') return false;
  return (
    argv.some((arg) => arg === '--trace-file' || arg.startsWith('--trace-file=')) ||
    Boolean(env[`FENCER_${service.toUpperCase()}_TRACE_FILE`]) ||
    otlpRequested(env)
  );
}

/** `server`, whose stop then also exports the spans still buffered (a SIGKILL loses them). */
export function stopTracingAfter<T extends { stop(): Promise<void> }>(server: T, tracing: Tracing | undefined): T {
  if (tracing === undefined) return server;
  return {
    ...server,
    stop: async () => {
      await server.stop();
      await tracing.shutdown();
    },
  };
}

/**
 * Handles one message of a stream in a SERVER span `name` joined to the
 * trace `carrier` names (@fencer/proto's messageSpan); the phases inside become its
 * children. An empty carrier (an untraced caller) starts a trace of its
 * own, as a unary call from an untraced caller does; `undefined` (a stream
 * whose messages carry no trace context) just runs `work`.
 */
export function inCarriedTrace<T>(
  name: string,
  carrier: Readonly<Record<string, string>> | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (carrier === undefined) return work();
  const parent = Object.keys(carrier).length === 0 ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, carrier);
  return trace
    .getTracer('fencer')
    .startActiveSpan(name, { kind: SpanKind.SERVER }, parent, (span) => endedWith(span, work));
}

/**
 * Records each phase as a span, a child of whatever span is active (the
 * call's server span). Without tracing started the API's tracer is a no-op,
 * but servers use `unrecorded` then, so an untraced call pays nothing.
 */
export const spanPhases: Phases = {
  run: (name, work, describe) =>
    trace.getTracer('fencer').startActiveSpan(name, (span) =>
      endedWith(span, async () => {
        const result = await work();
        if (describe) span.setAttributes(describe(result));
        return result;
      }),
    ),
};
