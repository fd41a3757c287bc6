// What every `fencer` server reads the same way: the address, the data
// directory, how callers authenticate (A1/A2: credentials or an explicit
// --insecure), metrics, and strict parsing of boolean environment variables.
import { Command, Option } from 'commander';
import {
  credentialsAuthenticator,
  CredentialsError,
  insecureAuthenticator,
  readCredentialsFile,
  type Authenticator,
  type Credential,
  type Role,
} from './auth.js';
import { hostPort } from './cli-options.js';
import { ConfigError } from './config-error.js';
import { tlsOptions } from './tls-config.js';

export { ConfigError };

/** How callers are authenticated: a credentials file (A2), or explicitly not at all. */
export type ServerAuth =
  | { readonly kind: 'credentials'; readonly path: string; readonly credentials: readonly Credential[] }
  | { readonly kind: 'insecure' };

/** The auth-related flag values as commander parses them. */
export interface AuthOptions {
  credentials?: string;
  insecure?: boolean;
}

/**
 * Resolves --credentials / --insecure into a frozen ServerAuth. Exactly one
 * must be given (A1: no silent default to open). `requiredRole` insists the
 * file names at least one identity of that role. Throws ConfigError.
 */
export function serverAuth(options: AuthOptions, rule: { requiredRole?: Role; why?: string } = {}): ServerAuth {
  if (options.credentials !== undefined && options.insecure) {
    throw new ConfigError('--credentials and --insecure exclude each other: choose one');
  }
  if (options.insecure) return Object.freeze({ kind: 'insecure' });
  if (options.credentials === undefined) {
    throw new ConfigError(
      'refusing to start without authentication: give --credentials FILE, or --insecure to run without it (A1, A2)',
    );
  }
  let credentials: Credential[];
  try {
    credentials = readCredentialsFile(options.credentials);
  } catch (error) {
    if (error instanceof CredentialsError) throw new ConfigError(error.message);
    throw error;
  }
  if (rule.requiredRole && !credentials.some((c) => c.role === rule.requiredRole)) {
    throw new ConfigError(
      `credentials file ${options.credentials} has no ${rule.requiredRole} credential${rule.why ? `; ${rule.why}` : ''}`,
    );
  }
  return Object.freeze({
    kind: 'credentials',
    path: options.credentials,
    credentials: Object.freeze(credentials.map((c) => Object.freeze({ ...c }))),
  });
}

/** The authenticator a resolved ServerAuth calls for. */
export function authenticatorFor(auth: ServerAuth): Authenticator {
  return auth.kind === 'insecure' ? insecureAuthenticator : credentialsAuthenticator(auth.credentials);
}

/**
 * The options every server shares, each also settable as `<envPrefix>_<NAME>`:
 * --listen, --data, --repair, --credentials, --insecure, --tls-cert, --tls-key,
 * --tls-ca (read with serverTls), --metrics.
 */
export function serverOptions(envPrefix: string, defaults: { listen: string; data: string }): Option[] {
  return [
    new Option('--listen <host:port>', 'gRPC address; port 0 picks a free port')
      .env(`${envPrefix}_LISTEN`)
      .default(defaults.listen)
      .argParser(hostPort),
    new Option('--data <dir>', 'LevelDB data directory, created when missing')
      .env(`${envPrefix}_DATA`)
      .default(defaults.data),
    new Option(
      '--repair',
      'open a damaged data directory anyway: keep what is left, log what was lost (T2; refused without it)',
    ).env(`${envPrefix}_REPAIR`),
    new Option('--credentials <file>', 'JSON array of {token, identity, role} for callers').env(
      `${envPrefix}_CREDENTIALS`,
    ),
    new Option('--insecure', 'accept every caller without authentication (explicit opt-out of A1/A2)').env(
      `${envPrefix}_INSECURE`,
    ),
    ...tlsOptions('server', envPrefix),
    new Option('--metrics <host:port>', 'serve Prometheus /metrics here')
      .env(`${envPrefix}_METRICS`)
      .argParser(hostPort),
  ];
}

/**
 * Commander sets a boolean flag whenever its variable exists, so
 * FENCER_SINK_INSECURE=false would silently switch auth off. Only an explicit
 * yes counts; anything unclear is refused.
 */
function envFlag(name: string, value: string | undefined): boolean {
  const normalized = (value ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes'].includes(normalized)) return true;
  if (['', '0', 'false', 'no'].includes(normalized)) return false;
  throw new ConfigError(`${name} must be 1/true/yes or 0/false/no, got "${value}"`);
}

/**
 * Adds `options` and an action to `command`: boolean flags taken from the
 * environment are re-read strictly (envFlag), `build` validates into a frozen
 * config, `run` also gets the command's declared arguments, and a
 * ConfigError from `build` or `run` ends in a one-line
 * `error: ...` and exit 1.
 */
export function configuredCommand<O extends object, C>(
  command: Command,
  options: readonly Option[],
  build: (options: O) => C,
  run: (config: C, ...args: string[]) => Promise<void>,
): Command {
  for (const option of options) command.addOption(option);
  // Commander calls the action with each declared argument, then the
  // options, then the command itself.
  return command.showHelpAfterError(false).action(async (...received: unknown[]) => {
    const cmd = received.at(-1) as Command;
    const parsed = received.at(-2) as O;
    const args = received.slice(0, -2) as string[];
    try {
      for (const option of options) {
        const name = option.attributeName();
        if (option.isBoolean() && option.envVar && cmd.getOptionValueSource(name) === 'env') {
          (parsed as Record<string, unknown>)[name] = envFlag(option.envVar, process.env[option.envVar]);
        }
      }
      await run(build(parsed), ...args);
    } catch (error) {
      if (error instanceof ConfigError) cmd.error(`error: ${error.message}`, { code: 'fencer.config' });
      throw error;
    }
  });
}
