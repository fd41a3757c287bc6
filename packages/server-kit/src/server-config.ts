// What every `fencer` server reads the same way: the address, the data
// directory, how callers authenticate (A1/A2: credentials or an explicit
// --insecure) and metrics.
import type { Metadata } from '@grpc/grpc-js';
import { Option } from 'commander';
import { ConfigError, hostPort, tlsOptions } from '@fencer/cli-kit';
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
