// What every `fencer` server reads the same way: the address, the data
// directory, how callers authenticate (A1/A2: credentials or an explicit
// --insecure), metrics, and strict parsing of boolean environment variables.
import { readFileSync } from 'node:fs';
import type { Metadata } from '@grpc/grpc-js';
import { Command, Option } from 'commander';
import {
  credentialsAuthenticator,
  CredentialsError,
  insecureAuthenticator,
  readCredentialsFile,
  type Authenticator,
  type Credential,
  type PeerAuth,
  type Principal,
  type Role,
} from './auth.js';
import { hostPort } from './cli-options.js';
import { ConfigError } from './config-error.js';
import { tlsOptions } from './tls-config.js';

export { ConfigError };

/** What a credentials file must hold besides valid entries, e.g. a coordinator credential at the sink (A1). */
export interface CredentialsRule {
  readonly requiredRole?: Role;
  /** Why the role is required; appended to the refusal. */
  readonly why?: string;
}

/** How callers are authenticated: a credentials file (A2), or explicitly not at all. */
export type ServerAuth =
  | {
      readonly kind: 'credentials';
      readonly path: string;
      readonly credentials: readonly Credential[];
      /** Checked again whenever the file is reloaded. */
      readonly rule: CredentialsRule;
    }
  | { readonly kind: 'insecure' };

/** The auth-related flag values as commander parses them. */
export interface AuthOptions {
  credentials?: string;
  insecure?: boolean;
}

/**
 * Reads the credentials file at `path` (readCredentialsFile) and checks
 * `rule`: the frozen credentials, or a CredentialsError saying why not.
 */
export function loadCredentials(path: string, rule: CredentialsRule = {}): readonly Credential[] {
  const credentials = readCredentialsFile(path);
  if (rule.requiredRole && !credentials.some((c) => c.role === rule.requiredRole)) {
    throw new CredentialsError(
      `credentials file ${path} has no ${rule.requiredRole} credential${rule.why ? `; ${rule.why}` : ''}`,
    );
  }
  return Object.freeze(credentials.map((c) => Object.freeze({ ...c })));
}

/**
 * Resolves --credentials / --insecure into a frozen ServerAuth. Exactly one
 * must be given (A1: no silent default to open). `rule.requiredRole` insists
 * the file names at least one identity of that role. Throws ConfigError.
 */
export function serverAuth(options: AuthOptions, rule: CredentialsRule = {}): ServerAuth {
  if (options.credentials !== undefined && options.insecure) {
    throw new ConfigError('--credentials and --insecure exclude each other: choose one');
  }
  if (options.insecure) return Object.freeze({ kind: 'insecure' });
  if (options.credentials === undefined) {
    throw new ConfigError(
      'refusing to start without authentication: give --credentials FILE, or --insecure to run without it (A1, A2)',
    );
  }
  try {
    const credentials = loadCredentials(options.credentials, rule);
    return Object.freeze({
      kind: 'credentials',
      path: options.credentials,
      credentials,
      rule: Object.freeze({ ...rule }),
    });
  } catch (error) {
    if (error instanceof CredentialsError) throw new ConfigError(error.message);
    throw error;
  }
}

/** What a reload of the credentials file did. */
export type CredentialsReload =
  /** The file's `credentials` entries now decide every call, on open connections too. */
  | { readonly kind: 'reloaded'; readonly path: string; readonly credentials: number }
  /** The file could not be used (`reason`); the previous credentials stay in force. */
  | { readonly kind: 'kept'; readonly path: string; readonly reason: string }
  /** Auth is off (--insecure): there is nothing to reload. */
  | { readonly kind: 'insecure' };

/** An Authenticator whose credentials file can be read again while the server runs (SIGHUP). */
export interface ReloadableAuthenticator extends Authenticator {
  /**
   * Re-reads the file and, only if it is valid under the same rule as at
   * start-up, swaps it in for every later call. Never throws for a bad file.
   */
  reload(): CredentialsReload;
}

/**
 * The authenticator a resolved ServerAuth calls for. Every call is checked
 * against the credentials in force when it arrives, so a reload takes
 * effect on connections already open, and none is dropped; a stream opened
 * before a reload is checked again at its next message (reauthenticate, A7).
 * A reload is all or nothing: the file is read and checked by the same code
 * as at start-up (loadCredentials), and only a valid one replaces the
 * credentials in force.
 */
export function authenticatorFor(auth: ServerAuth): ReloadableAuthenticator {
  if (auth.kind === 'insecure')
    return Object.freeze({ ...insecureAuthenticator, reload: (): CredentialsReload => ({ kind: 'insecure' }) });
  let current = credentialsAuthenticator(auth.credentials);
  return Object.freeze({
    enabled: true,
    authenticate: (metadata: Metadata, peer?: PeerAuth) => current.authenticate(metadata, peer),
    isCurrent: (principal: Principal) => current.isCurrent(principal),
    reload(): CredentialsReload {
      try {
        const credentials = loadCredentials(auth.path, auth.rule);
        current = credentialsAuthenticator(credentials);
        return { kind: 'reloaded', path: auth.path, credentials: credentials.length };
      } catch (error) {
        if (!(error instanceof CredentialsError)) throw error;
        return { kind: 'kept', path: auth.path, reason: error.message };
      }
    },
  });
}

/**
 * The bearer token in a client's --token-file (surrounding whitespace
 * ignored). Throws ConfigError when it cannot be read or is empty.
 */
export function readTokenFile(file: string): string {
  try {
    const token = readFileSync(file, 'utf8').trim();
    if (token) return token;
  } catch (error) {
    throw new ConfigError(
      `cannot read --token-file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  throw new ConfigError(`--token-file ${file} is empty`);
}

/**
 * The options every server shares, each also settable as `<envPrefix>_<NAME>`:
 * --listen, --data, --repair, --credentials, --insecure, --tls-cert, --tls-key,
 * --tls-ca (read with serverTls), --metrics, --trace-file.
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
    new Option(
      '--trace-file <file>',
      'append OpenTelemetry spans to this file as JSON lines (without it, the OTEL_* variables may export them over OTLP)',
    ).env(`${envPrefix}_TRACE_FILE`),
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
