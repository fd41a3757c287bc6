// `fencer sink` flags and environment, read once, validated, frozen. A1: the
// sink refuses to start unless it can authenticate the coordinator, or
// --insecure is given explicitly.
import { Command, Option } from 'commander';
import { CredentialsError, hostPort, positiveInteger, readCredentialsFile, type Credential } from '@fencer/server-kit';

/** gRPC's own message limit is 4 × the payload limit; this cap keeps that below 2 GiB. */
export const MAX_PAYLOAD_LIMIT_BYTES = 256 * 1024 * 1024;

/** How callers are authenticated: a credentials file (A2), or explicitly not at all. */
export type SinkAuth =
  | { readonly kind: 'credentials'; readonly path: string; readonly credentials: readonly Credential[] }
  | { readonly kind: 'insecure' };

/** A validated, frozen sink configuration. */
export interface SinkConfig {
  /** HOST:PORT to serve gRPC on; port 0 picks a free port. */
  readonly listen: string;
  /** LevelDB directory, created when missing. */
  readonly dataDir: string;
  readonly auth: SinkAuth;
  /** V2 payload limit in bytes (default 1 MiB). */
  readonly maxPayloadBytes: number;
  /** HOST:PORT for Prometheus /metrics, or undefined for none. */
  readonly metrics: string | undefined;
}

/** Flag values as commander parses them (also what `sinkConfig` takes in-process). */
export interface SinkOptions {
  listen: string;
  data: string;
  credentials?: string;
  insecure?: boolean;
  maxPayloadBytes: number;
  metrics?: string;
}

/** A configuration the operator must fix; the message is one line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Validates parsed options into a frozen SinkConfig. Throws ConfigError. */
export function sinkConfig(options: SinkOptions): SinkConfig {
  if (options.credentials !== undefined && options.insecure) {
    throw new ConfigError('--credentials and --insecure exclude each other: choose one');
  }
  let auth: SinkAuth;
  if (options.insecure) {
    auth = Object.freeze({ kind: 'insecure' });
  } else if (options.credentials !== undefined) {
    let credentials: Credential[];
    try {
      credentials = readCredentialsFile(options.credentials);
    } catch (error) {
      if (error instanceof CredentialsError) throw new ConfigError(error.message);
      throw error;
    }
    // A1: without a coordinator credential nobody could ever advance a fence.
    if (!credentials.some((c) => c.role === 'coordinator')) {
      throw new ConfigError(`credentials file ${options.credentials} has no coordinator credential; AdvanceFence would be impossible (A1)`);
    }
    auth = Object.freeze({ kind: 'credentials', path: options.credentials, credentials: Object.freeze(credentials.map((c) => Object.freeze({ ...c }))) });
  } else {
    throw new ConfigError('refusing to start without authentication: give --credentials FILE, or --insecure to run without it (A1)');
  }
  if (options.maxPayloadBytes > MAX_PAYLOAD_LIMIT_BYTES) {
    throw new ConfigError(`--max-payload-bytes must be at most ${MAX_PAYLOAD_LIMIT_BYTES}`);
  }
  return Object.freeze({
    listen: options.listen,
    dataDir: options.data,
    auth,
    maxPayloadBytes: options.maxPayloadBytes,
    metrics: options.metrics,
  });
}

// Commander turns a boolean flag on whenever its variable is set, so
// FENCER_SINK_INSECURE=false would silently switch auth off; only an explicit
// yes counts, and anything unclear is refused.
function insecureFromEnv(value: string | undefined): boolean {
  const normalized = (value ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes'].includes(normalized)) return true;
  if (['', '0', 'false', 'no'].includes(normalized)) return false;
  throw new ConfigError(`FENCER_SINK_INSECURE must be 1/true/yes or 0/false/no, got "${value}"`);
}

/**
 * The `sink` subcommand. Bad flags and bad values end in commander's one-line
 * error and a non-zero exit; `run` receives the validated config.
 */
export function buildSinkCommand(run: (config: SinkConfig) => Promise<void>): Command {
  const command = new Command('sink')
    .description('the fenced write target: accepts a write only under the current fence (F1-F6)')
    .addOption(new Option('--listen <host:port>', 'gRPC address; port 0 picks a free port').env('FENCER_SINK_LISTEN').default('127.0.0.1:50051').argParser(hostPort))
    .addOption(new Option('--data <dir>', 'LevelDB data directory, created when missing').env('FENCER_SINK_DATA').default('./data/sink'))
    .addOption(new Option('--credentials <file>', 'JSON array of {token, identity, role}; needs a coordinator entry').env('FENCER_SINK_CREDENTIALS'))
    .addOption(new Option('--insecure', 'accept every caller without authentication (explicit opt-out of A1/A2)').env('FENCER_SINK_INSECURE'))
    .addOption(new Option('--max-payload-bytes <n>', 'largest accepted payload (V2)').env('FENCER_SINK_MAX_PAYLOAD_BYTES').default(1024 * 1024).argParser(positiveInteger))
    .addOption(new Option('--metrics <host:port>', 'serve Prometheus /metrics here').env('FENCER_SINK_METRICS').argParser(hostPort))
    .showHelpAfterError(false)
    .action(async (options: SinkOptions, cmd: Command) => {
      let config: SinkConfig;
      try {
        if (cmd.getOptionValueSource('insecure') === 'env') options.insecure = insecureFromEnv(process.env.FENCER_SINK_INSECURE);
        config = sinkConfig(options);
      } catch (error) {
        if (error instanceof ConfigError) cmd.error(`error: ${error.message}`, { code: 'fencer.config' });
        throw error;
      }
      await run(config);
    });
  return command;
}
