// `fencer sink` flags and environment, read once, validated, frozen. A1: the
// sink refuses to start unless it can authenticate the coordinator, or
// --insecure is given explicitly.
import { Command, Option } from 'commander';
import {
  ConfigError,
  configuredCommand,
  positiveInteger,
  serverTls,
  type ServerTls,
  type TlsFlags,
} from '@fencer/cli-kit';
import {
  connectionLimitOptions,
  connectionLimits,
  serverAuth,
  serverOptions,
  type ConnectionLimits,
  type ServerAuth,
} from '@fencer/server-kit';

export { ConfigError };

/** gRPC's own message limit is 4 × the payload limit; this cap keeps that below 2 GiB. */
export const MAX_PAYLOAD_LIMIT_BYTES = 256 * 1024 * 1024;

/** How callers are authenticated: a credentials file (A2), or explicitly not at all. */
export type SinkAuth = ServerAuth;

/** A validated, frozen sink configuration. */
export interface SinkConfig {
  /** HOST:PORT to serve gRPC on; port 0 picks a free port. */
  readonly listen: string;
  /** LevelDB directory, created when missing. */
  readonly dataDir: string;
  /** T2: open a damaged data directory with what is left, instead of refusing to start. */
  readonly repair: boolean;
  readonly auth: SinkAuth;
  /** TLS (--tls-cert/--tls-key), mutual with --tls-ca; null: plaintext. */
  readonly tls: ServerTls | null;
  /** V2 payload limit in bytes (default 1 MiB). */
  readonly maxPayloadBytes: number;
  /** HOST:PORT for Prometheus /metrics, or undefined for none. */
  readonly metrics: string | undefined;
  /** Spans go to this file as JSON lines; undefined: only if the OTEL_* environment asks. */
  readonly traceFile: string | undefined;
  /** V4: streams, buffered bytes and lifetime of each connection. */
  readonly connectionLimits: ConnectionLimits;
}

/** Flag values as commander parses them (also what `sinkConfig` takes in-process; absent V4 limits take their defaults). */
export interface SinkOptions extends TlsFlags, Partial<Record<keyof ConnectionLimits, number>> {
  listen: string;
  data: string;
  repair?: boolean;
  credentials?: string;
  insecure?: boolean;
  maxPayloadBytes: number;
  metrics?: string;
  traceFile?: string;
}

/** Validates parsed options into a frozen SinkConfig. Throws ConfigError. */
export function sinkConfig(options: SinkOptions): SinkConfig {
  // A1: without a coordinator credential nobody could ever advance a fence.
  const auth = serverAuth(options, { requiredRole: 'coordinator', why: 'AdvanceFence would be impossible (A1)' });
  if (options.maxPayloadBytes > MAX_PAYLOAD_LIMIT_BYTES) {
    throw new ConfigError(`--max-payload-bytes must be at most ${MAX_PAYLOAD_LIMIT_BYTES}`);
  }
  return Object.freeze({
    listen: options.listen,
    dataDir: options.data,
    repair: options.repair === true,
    auth,
    tls: serverTls(options),
    maxPayloadBytes: options.maxPayloadBytes,
    metrics: options.metrics,
    traceFile: options.traceFile,
    connectionLimits: connectionLimits(options),
  });
}

/**
 * The `sink` subcommand. Bad flags and bad values end in commander's one-line
 * error and a non-zero exit; `run` receives the validated config.
 */
export function buildSinkCommand(run: (config: SinkConfig) => Promise<void>): Command {
  return configuredCommand(
    new Command('sink').description('the fenced write target: accepts a write only under the current fence (F1-F6)'),
    [
      ...serverOptions('FENCER_SINK', { listen: '127.0.0.1:50051', data: './data/sink' }),
      new Option('--max-payload-bytes <n>', 'largest accepted payload (V2)')
        .env('FENCER_SINK_MAX_PAYLOAD_BYTES')
        .default(1024 * 1024)
        .argParser(positiveInteger),
      ...connectionLimitOptions('FENCER_SINK'),
    ],
    sinkConfig,
    run,
  );
}
