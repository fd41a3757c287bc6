// How a server process lives and dies: one JSON ready line on stdout, logs
// on stderr, a clean stop on SIGTERM/SIGINT, a one-line message and exit 1
// when it cannot start.
import type { Logger } from './log.js';

/** Prints the ready line tools wait for: {"event":"ready","service":...,"address":...}. */
export function announceReady(service: string, address: string, extra: Record<string, string> = {}): void {
  process.stdout.write(JSON.stringify({ event: 'ready', service, address, ...extra }) + '\n');
}

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Runs a server until SIGTERM/SIGINT, then stops it and exits 0. A start-up
 * failure prints `fencer <service>: <message>` and exits 1; a second SIGINT
 * during the stop exits at once.
 */
export async function runUntilSignal(service: string, log: Logger, start: () => Promise<Stoppable>): Promise<void> {
  let running: Stoppable | undefined;
  let stopping = false;
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
    if (stopping) {
      // Ctrl-C reaches the whole process group, and a supervisor (fencer
      // cluster) then sends SIGTERM too: only a second Ctrl-C means "now".
      if (signal === 'SIGINT') process.exit(1);
      return;
    }
    stopping = true;
    log.info({ signal }, 'stopping');
    if (running) void stop(running);
  };
  // Installed before start(): the ready line is printed inside it, and a
  // supervisor may signal the moment it reads that line.
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    running = await start();
  } catch (error) {
    log.debug({ err: error }, 'start-up failed');
    process.stderr.write(`fencer ${service}: ${(error as Error).message}\n`);
    process.exit(1);
  }
  if (stopping) void stop(running);
}
