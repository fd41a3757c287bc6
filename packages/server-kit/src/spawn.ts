// The other side of the ready line: start a fencer server as a child process
// and learn its address from the `{"event":"ready",...}` line it prints.
// Used by `fencer cluster` and by tests that need real processes.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ReadyChild {
  readonly child: ChildProcess;
  /** The parsed ready line (`address`, `service`, and anything else it carried). */
  readonly ready: { readonly event: 'ready'; readonly service: string; readonly address: string } & Record<string, unknown>;
  /** Resolves once the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `node <script> <args>` and resolves once it prints its ready line.
 * Rejects (killing the child) if it exits first or is not ready in
 * `timeoutMs`; the error then carries the child's stderr.
 */
export function spawnReady(
  script: string,
  args: readonly string[],
  options: {
    env?: NodeJS.ProcessEnv;
    timeoutMs?: number;
    /** A file descriptor for the child's stderr; by default it is piped to `onStderr`. */
    stderrFd?: number;
    onStderr?: (text: string) => void;
  } = {},
): Promise<ReadyChild> {
  const stdio: StdioOptions = ['ignore', 'pipe', options.stderrFd ?? 'pipe'];
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...options.env }, stdio });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (stderr.length < 64 * 1024) stderr += text; // enough to explain a failed start
    options.onStderr?.(text);
  });
  const describe = () => stderr;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const what = `${args.slice(0, 1).join(' ') || script}`;
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} was not ready within ${timeoutMs} ms${suffix(describe)}`));
    }, timeoutMs);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (code ${code}, signal ${signal}) before it was ready${suffix(describe)}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(line);
      } catch {
        return; // not a JSON line: ignore, only the ready event matters
      }
      if (event.event !== 'ready' || typeof event.address !== 'string') return;
      clearTimeout(timer);
      resolve({ child, ready: event as ReadyChild['ready'], exited });
    });
  });
}

const suffix = (describe?: () => string) => {
  const text = describe?.().trim();
  return text ? `\n${text}` : '';
};
