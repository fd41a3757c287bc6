// What every long-running `fencer` process does the same way, server or
// not: the JSON ready line a supervisor waits for, and stopping when that
// supervisor is gone.

/** Prints the ready line tools wait for (spawnReady reads it): {"event":"ready","service":...,"address":...}. */
export function announceReady(service: string, address: string, extra: Record<string, string> = {}): void {
  process.stdout.write(JSON.stringify({ event: 'ready', service, address, ...extra }) + '\n');
}

/** The environment variable a supervisor sets when it holds the write end of the child's stdin. */
export const STOP_WITH_PARENT_ENV = 'FENCER_STOP_WITH_PARENT';

/**
 * Calls `onGone` once when the supervising process is gone, if it asked for
 * that (STOP_WITH_PARENT_ENV=1): it holds the write end of our stdin and
 * never writes, so end-of-file there means it died, even by SIGKILL, which
 * no signal handler of its own could have passed on. Otherwise does nothing.
 */
export function whenParentGone(onGone: () => void): void {
  if (process.env[STOP_WITH_PARENT_ENV] !== '1') return;
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    onGone();
  };
  process.stdin.once('end', once);
  process.stdin.once('error', once);
  process.stdin.resume();
}
