// The other side of the ready line: start a fencer server as a child process
// and learn its address from the `{"event":"ready",...}` line it prints.
// Used by startCluster and by tests that need real processes.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { STOP_WITH_PARENT_ENV } from '@fencer/cli-kit';

/** A child that printed its ready line. */
export interface ReadyChild {
  readonly child: ChildProcess;
  /** The parsed ready line (`address`, `service`, and anything else it carried). */
  readonly ready: { readonly event: 'ready'; readonly service: string; readonly address: string } & Record<
    string,
    unknown
  >;
  /** Resolves once the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Options of spawnReady. */
export interface SpawnReadyOptions {
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** How long the child may take to print its ready line; default 15000 ms. */
  timeoutMs?: number;
  /** A file descriptor for the child's stderr; by default it is piped to `onStderr`. */
  stderrFd?: number;
  /** Each piece of the child's stderr as text (never a split UTF-8 character). */
  onStderr?: (text: string) => void;
  /** Aborting before the ready line sends the child SIGTERM. */
  signal?: AbortSignal;
  /** Every stdout line, the ready line and those before and after it included. */
  onStdoutLine?: (line: string) => void;
  /**
   * The program that runs `script`; default this Node. Any program that
   * prints the ready line will do (interop tests run a Python server).
   */
  interpreter?: string;
}

// Enough to explain a failed start: the reason is the last thing a child says.
const STDERR_TAIL_CHARS = 64 * 1024;

/**
 * Spawns `node <script> <args>` (`interpreter` in node's place, if given)
 * and resolves once it prints its ready line (other stdout lines, JSON or
 * not, are ignored). Rejects if it exits first, is aborted, or is not ready
 * in `timeoutMs` (then it is SIGKILLed) — always only once the child has
 * exited — with the tail of the child's stderr.
 */
export function spawnReady(
  script: string,
  args: readonly string[],
  options: SpawnReadyOptions = {},
): Promise<ReadyChild> {
  // The child's stdin is a pipe this process never writes to: if this
  // process dies, even by SIGKILL, the child reads end-of-file and stops
  // (whenParentGone), so no child outlives its supervisor.
  const stdio: StdioOptions = ['pipe', 'pipe', options.stderrFd ?? 'pipe'];
  const child = spawn(options.interpreter ?? process.execPath, [script, ...args], {
    env: { ...process.env, [STOP_WITH_PARENT_ENV]: '1', ...options.env },
    stdio,
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    stderr = (stderr + text).slice(-STDERR_TAIL_CHARS);
    options.onStderr?.(text);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A child that could not be spawned at all never exits.
    child.once('error', () => {
      if (child.pid === undefined) resolve({ code: null, signal: null });
    });
  });
  const what = args[0] ?? script;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const explained = (message: string) => new Error(`${message}${stderr.trim() ? `\n${stderr.trim()}` : ''}`);
  return new Promise((resolve, reject) => {
    // Set when this side ends the child; the rejection waits for its exit,
    // so a caller never outlives a child it was told had failed.
    let endedBecause: string | undefined;
    const abort = () => {
      endedBecause ??= `${what} was stopped before it was ready`;
      child.kill('SIGTERM');
    };
    const settle = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
    };
    const timer = setTimeout(() => {
      endedBecause = `${what} was not ready within ${timeoutMs} ms`;
      child.kill('SIGKILL');
    }, timeoutMs);
    if (options.signal?.aborted) abort();
    else options.signal?.addEventListener('abort', abort, { once: true });
    child.once('error', (error) => {
      if (child.pid !== undefined) return; // a failed kill(), not a failed start
      settle();
      reject(new Error(`cannot start ${what}: ${error.message}`));
    });
    void exited.then(({ code, signal }) => {
      settle();
      reject(explained(endedBecause ?? `${what} exited (code ${code}, signal ${signal}) before it was ready`));
    });
    // Read stdout to its end even after the ready line: a child blocked on a
    // full pipe would stop serving.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      options.onStdoutLine?.(line);
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        return; // not a JSON line: only the ready event matters
      }
      if (typeof event !== 'object' || event === null) return;
      const ready = event as Record<string, unknown>;
      if (ready.event !== 'ready' || typeof ready.address !== 'string') return;
      settle();
      resolve({ child, ready: ready as ReadyChild['ready'], exited });
    });
  });
}

/** Whether a process with this pid exists (signal 0 probes without delivering). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of live processes whose command line contains `text` (Linux /proc); for checks that nothing was left behind. */
export function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/**
 * Stops a child with SIGTERM, and SIGKILL if it is still there after
 * `graceMs`; resolves with how it exited (at once if it already had).
 */
export async function stopChild(
  started: Pick<ReadyChild, 'child' | 'exited'>,
  graceMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { child, exited } = started;
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(kill);
  }
}
