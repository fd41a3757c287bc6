// How a server process lives and dies: logs on stderr, a clean stop on
// SIGTERM/SIGINT or when its supervisor is gone, the credentials file read
// again on SIGHUP, a one-line message and exit 1 when it cannot start or
// its storage fails. (Its ready line is cli-kit's announceReady.)
import { ConfigError, StartupError, whenParentGone } from '@fencer/cli-kit';
import type { Logger } from './log.js';
import type { CredentialsReload } from './server-config.js';

/** What runUntilSignal runs: anything with a stop that resolves once it is stopped. */
export interface Stoppable {
  stop(): Promise<void>;
  /** Resolves with the cause if its store fails (T3): the process then stops and exits 1. */
  readonly storeFailed?: Promise<Error>;
  /** Re-reads the credentials file (ReloadableAuthenticator.reload); called on SIGHUP. */
  reloadCredentials?(): CredentialsReload;
}

/** The one log line a SIGHUP's reload earns; operators and tests wait on its message. */
export function logCredentialsReload(log: Logger, outcome: CredentialsReload): void {
  switch (outcome.kind) {
    case 'reloaded':
      log.info({ path: outcome.path, credentials: outcome.credentials }, 'credentials reloaded');
      return;
    case 'kept':
      log.warn({ path: outcome.path, reason: outcome.reason }, 'credentials not reloaded; the previous ones stay');
      return;
    case 'insecure':
      log.info('SIGHUP: running with --insecure, no credentials to reload');
      return;
  }
}

/**
 * How long a server whose store failed (T3) lets its calls in progress take
 * their STORAGE_UNAVAILABLE answers before it exits anyway. They fail at
 * once, except a coordinator's Acquire waiting on its sink (2 s by default).
 */
export const FAIL_STOP_GRACE_MS = 5_000;

/**
 * Runs a server until SIGTERM/SIGINT (or its supervisor is gone, see whenParentGone), then stops it and exits 0 (1 if the
 * stop fails). SIGHUP reloads the credentials (logged in one line, see
 * logCredentialsReload) instead of ending the process, as it would by
 * default. A start-up failure prints `fencer <service>: <message>` and
 * exits 1; the same signal again during the stop exits 1 at once. A failed
 * store (T3) is logged in one line naming the cause, then the server stops
 * (calls in progress get their STORAGE_UNAVAILABLE answers, within
 * FAIL_STOP_GRACE_MS) and the process exits 1, so that nothing more is
 * acknowledged; a restart recovers from what was synced.
 */
export async function runUntilSignal(service: string, log: Logger, start: () => Promise<Stoppable>): Promise<void> {
  let running: Stoppable | undefined;
  let stoppingOn: NodeJS.Signals | undefined;
  const stop = (server: Stoppable) =>
    server.stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'unclean stop');
        process.exit(1);
      },
    );
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppingOn) {
      // Ctrl-C reaches the whole process group and a supervisor (fencer
      // cluster) sends SIGTERM too, in either order as Node sees them: only
      // the same signal again (a second Ctrl-C) means "now".
      if (signal === stoppingOn) process.exit(1);
      log.info({ signal }, `already stopping; ${stoppingOn} again exits at once`);
      return;
    }
    stoppingOn = signal;
    log.info({ signal }, 'stopping');
    if (running) void stop(running);
  };
  whenParentGone(() => {
    log.warn('the supervising process is gone; stopping');
    onSignal('SIGTERM');
  });
  // Installed before start(): the ready line is printed inside it, and a
  // supervisor may signal the moment it reads that line.
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // A SIGHUP during start() may follow an edit made after the file was read
  // there: it is answered once the server runs.
  let reloadAsked = false;
  const reload = () => {
    if (running?.reloadCredentials) logCredentialsReload(log, running.reloadCredentials());
  };
  process.on('SIGHUP', () => {
    reloadAsked = true;
    reload();
  });
  try {
    running = await start();
  } catch (error) {
    // An operator's problem is the one line below; anything else is a bug,
    // and its stack must reach the log.
    const expected = error instanceof StartupError || error instanceof ConfigError;
    log[expected ? 'debug' : 'error']({ err: error }, 'start-up failed');
    process.stderr.write(`fencer ${service}: ${(error as Error).message}\n`);
    process.exit(1);
  }
  const server = running;
  void server.storeFailed?.then((cause) => {
    log.fatal({ err: cause }, `${cause.message}; stopping, exit 1 (T3)`);
    stoppingOn ??= 'SIGTERM'; // a signal now ends the process at once
    const exit = () => process.exit(1);
    setTimeout(exit, FAIL_STOP_GRACE_MS).unref();
    server.stop().then(exit, exit);
  });
  if (stoppingOn) return void stop(running);
  if (reloadAsked) reload();
}
