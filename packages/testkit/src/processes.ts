// Real processes for tests: `fencer <subcommand>` started as a child on port
// 0, its address read from the ready line, killed with real signals.
import { spawn, type ChildProcess } from 'node:child_process';
import { fencerBin, spawnReady, startCluster, stopChild, type Cluster, type ClusterOptions } from '@fencer/supervisor';
import { eventually, tempDir } from './waiting.js';

/** A running `fencer` process started by startFencer. */
export interface FencerProcess {
  readonly child: ChildProcess;
  /** HOST:PORT from the ready line. */
  readonly address: string;
  /** The whole ready line (`fencer cluster` adds `sink`, `coordinator` and their `pids`). */
  readonly ready: Readonly<Record<string, unknown>>;
  /** Everything the process wrote to stderr so far (its JSON logs). */
  stderr(): string;
  /** Sends a signal (SIGKILL, SIGSTOP, SIGCONT, SIGTERM...). */
  kill(signal: NodeJS.Signals): void;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** How a `fencer` run ended, with everything it printed. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `fencer <args>` to completion (for CLI error tests); bounded by timeoutMs. */
export function runFencer(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
  const child = spawn(process.execPath, [fencerBin(), ...args], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  // A hang detector, not a speed check: a cluster that starts and stops
  // three processes can take 10 s on a loaded 2-core machine.
  const timeoutMs = options.timeoutMs ?? 25_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fencer ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    // 'close', not 'exit': only then has all of the child's output been read.
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Starts `fencer <args>` and resolves once it printed its ready line. Rejects
 * (and kills the child) if it exits first or is not ready within timeoutMs.
 * `bin` runs another script with fencer's command line instead (a
 * deliberately broken variant's, from @fencer/variants), and `interpreter`
 * runs `bin` with another program than Node (an implementation in Python).
 */
export async function startFencer(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; bin?: string; interpreter?: string } = {},
): Promise<FencerProcess> {
  let stderr = '';
  const { bin = fencerBin(), ...spawnOptions } = options;
  const { child, ready, exited } = await spawnReady(bin, args, {
    ...spawnOptions,
    onStderr: (text) => (stderr += text),
  });
  return { child, address: ready.address, ready, stderr: () => stderr, kill: (signal) => child.kill(signal), exited };
}

/** The JSON log entries among a process's stderr lines (a failed start adds one plain line). */
export function logEntries(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The log entries whose message includes `text`, once there is at least one (bounded wait). */
export function loggedLines(fencer: FencerProcess, text: string): Promise<Record<string, unknown>[]> {
  return eventually(
    () => {
      const found = logEntries(fencer.stderr()).filter((entry) => String(entry.msg).includes(text));
      return found.length > 0 ? found : undefined;
    },
    { what: `a log line with "${text}"` },
  );
}

/**
 * What a service process started with `--metrics` serves on /metrics right
 * now; the endpoint's address is in the `metrics` field of its ready log line.
 */
export async function scrapeMetrics(fencer: FencerProcess): Promise<string> {
  const address = logEntries(fencer.stderr()).find((entry) => typeof entry.metrics === 'string')?.metrics;
  if (typeof address !== 'string') throw new Error(`no metrics address in the log:\n${fencer.stderr()}`);
  return (await fetch(`http://${address}/metrics`)).text();
}

/** Stops a process with SIGTERM, and SIGKILL if it is still there after graceMs. */
export async function stopFencer(fencer: FencerProcess, graceMs = 5_000): Promise<void> {
  await stopChild(fencer, graceMs);
}

/**
 * A secured cluster (sink, coordinator, fault proxy; port 0; generated
 * credentials) in a fresh temporary directory, for tests: `stop()` stops
 * it and removes the directory.
 */
export async function startTestCluster(
  prefix: string,
  options: Partial<ClusterOptions> = {},
): Promise<{ cluster: Cluster; stop(): Promise<void> }> {
  const dir = tempDir(prefix);
  const cluster = await startCluster({
    data: dir.path,
    sinkListen: '127.0.0.1:0',
    coordinatorListen: '127.0.0.1:0',
    insecure: false,
    stopGraceMs: 5_000,
    ...options,
  });
  return {
    cluster,
    stop: async () => {
      await cluster.stop();
      dir.remove();
    },
  };
}
