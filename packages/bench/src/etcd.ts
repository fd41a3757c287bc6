// etcd, the peer the sink and the coordinator are measured against: Debian's
// `etcd` binary started on loopback with its own data directory, when it is
// installed. etcd knows nothing of our ready line or of a supervisor's
// stdin, so it runs under a small shell that prints its pid, then waits on
// its stdin: when the bench goes, even by SIGKILL, stdin ends and the shell
// stops etcd, as whenParentGone does for the fencer servers.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, closeSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

/** A running etcd. */
export interface EtcdProcess {
  /** etcd's own pid (not its shell's): whose CPU is measured. */
  readonly pid: number;
  /** http://127.0.0.1:PORT, for the etcd3 client. */
  readonly endpoint: string;
  /** What `etcd --version` says, e.g. 3.4.23. */
  readonly version: string;
  /** Stops etcd (SIGTERM, SIGKILL after graceMs) and its shell. */
  stop(graceMs: number): Promise<void>;
}

/** The `etcd` executable on PATH, or undefined when it is not installed. */
export function findEtcd(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'etcd');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

// "$@" is etcd with its flags. The trap covers a SIGTERM to the shell; the
// read covers the bench going away without a word.
const WRAPPER = `"$@" & pid=$!
echo "$pid"
trap 'kill "$pid" 2>/dev/null' TERM INT HUP
read _ || true
kill "$pid" 2>/dev/null
wait "$pid"`;

const READY_WITHIN_MS = 15_000;

/**
 * Starts `binary` as a one-member etcd cluster on 127.0.0.1 with its data in
 * `dataDir` and its log in `logFile`; resolves once /health says it serves.
 * Rejects (with nothing left running) if it exits first or is not healthy
 * within 15 s.
 */
export async function startEtcd(binary: string, dataDir: string, logFile: string): Promise<EtcdProcess> {
  const version = /etcd Version: (\S+)/.exec(execFileSync(binary, ['--version'], { encoding: 'utf8' }))?.[1] ?? '?';
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name',
    'bench',
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    endpoint,
    '--advertise-client-urls',
    endpoint,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    `bench=${peer}`,
    '--logger',
    'zap',
    '--log-level',
    'warn',
  ];
  const logFd = openSync(logFile, 'a');
  let shell: ChildProcess;
  try {
    shell = spawn('sh', ['-c', WRAPPER, 'etcd', binary, ...args], { stdio: ['pipe', 'pipe', logFd] });
  } finally {
    closeSync(logFd);
  }
  const exited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
  const stop = async (graceMs: number) => {
    shell.stdin?.end();
    const timer = setTimeout(() => {
      if (pid !== undefined) killQuietly(pid);
      shell.kill('SIGKILL');
    }, graceMs);
    await exited;
    clearTimeout(timer);
  };
  let pid: number | undefined;
  try {
    pid = await new Promise<number>((resolve, reject) => {
      createInterface({ input: shell.stdout! }).once('line', (line) => resolve(Number(line)));
      void exited.then(() => reject(new Error(`etcd exited before it started (log: ${logFile})`)));
    });
    const deadline = performance.now() + READY_WITHIN_MS;
    while (!(await healthy(endpoint))) {
      if (shell.exitCode !== null || shell.signalCode !== null) throw new Error(`etcd exited (log: ${logFile})`);
      if (performance.now() > deadline)
        throw new Error(`etcd was not healthy within ${READY_WITHIN_MS} ms (log: ${logFile})`);
      await sleep(50);
    }
  } catch (error) {
    await stop(2_000);
    throw error;
  }
  return { pid, endpoint, version, stop };
}

async function healthy(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1_000) });
    return response.ok && ((await response.json()) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

/** A TCP port free on 127.0.0.1 right now (etcd cannot be told to pick one and say which). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
