// etcd as the replicas' store (H1), the bench's peer and the tests' real
// etcd: Debian's `etcd` binary started on loopback as a cluster of one or
// three members, each with its own data directory and log, each killable,
// pausable and restartable on its own (the chaos suite's etcd nemeses).
//
// Every member runs with lease checkpointing (without it, a change of etcd's
// own Raft leader restarts every lease's TTL, so a dead coordinator's
// election key would outlive its TTL) and `--logger zap` (etcd 3.4.23 panics
// at start on a nil logger in its checkpoint config check otherwise).
//
// etcd knows nothing of our ready line or of a supervisor's stdin, so each
// member runs under a small shell that prints etcd's pid, then waits on its
// stdin: when the parent goes, even by SIGKILL, stdin ends and the shell
// stops etcd, as whenParentGone does for the fencer servers.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  constants,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { randomUUID } from 'node:crypto';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

/** One etcd member of an EtcdCluster. */
export interface EtcdMember {
  /** etcd-1, etcd-2, etcd-3: its --name, and what a cluster's kill and restart address. */
  readonly name: string;
  /** etcd's own pid (not its shell's) of the current process: a new one after restart. */
  readonly pid: number;
  /** 127.0.0.1:PORT, its client address; the same after restart. */
  readonly endpoint: string;
  /** Its log file (etcd's JSON lines, warnings and up). */
  readonly log: string;
  /**
   * Sends `signal` to etcd itself. SIGKILL resolves once the process is gone
   * (then restart() brings it back); SIGSTOP once every thread of it is
   * stopped (a signal is delivered after kill() returns), SIGCONT once it
   * runs again; SIGTERM at once.
   */
  kill(signal: 'SIGKILL' | 'SIGSTOP' | 'SIGCONT' | 'SIGTERM'): Promise<void>;
  /**
   * Starts the member again with its data (after a kill; a running member is
   * stopped first) and resolves once it answers on its peer address, ready
   * to rejoin. It serves clients only once a quorum of members runs: that is
   * not waited for (3.4 accepts no client call before it has published
   * itself through Raft, so with its peers down its client address hangs).
   */
  restart(): Promise<void>;
}

/** A running etcd cluster on loopback. */
export interface EtcdCluster {
  /** Each member's client address (HOST:PORT), in member order. */
  readonly endpoints: readonly string[];
  readonly members: readonly EtcdMember[];
  /** What `etcd --version` says, e.g. 3.4.23. */
  readonly version: string;
  /** Stops every member (SIGTERM, SIGKILL after graceMs, default 5 s); idempotent. */
  stop(graceMs?: number): Promise<void>;
}

/** What startEtcdCluster starts. */
export interface EtcdClusterOptions {
  /** One member (tests, the bench) or three (a quorum that survives the loss of one). */
  readonly members: 1 | 3;
  /** Each member's data goes in dataDir/etcd-N (created if missing). */
  readonly dataDir: string;
  /** Each member's log is logDir/etcd-N.log (appended to). */
  readonly logDir: string;
  /** The etcd executable; default findEtcd(). */
  readonly binary?: string;
  /** Picks each client and peer port; default a port free on 127.0.0.1 when asked. */
  readonly choosePort?: () => Promise<number>;
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

/** etcd3's `hosts` for HOST:PORT endpoints: it wants the scheme. */
export function etcdHosts(endpoints: readonly string[]): string[] {
  return endpoints.map((endpoint) => `http://${endpoint}`);
}

// "$@" is etcd with its flags. The shell lives exactly as long as etcd (so
// a SIGKILL to etcd is seen as the shell's exit), while a watcher on its
// stdin (fd 3: a background job's own stdin is /dev/null) stops etcd when
// the parent goes away without a word. The trap covers a SIGTERM to the
// shell; the SIGCONT after each kill lets a paused etcd act on the SIGTERM.
const WRAPPER = `"$@" & pid=$!
echo "$pid"
exec 3<&0
(read _ <&3 || true; kill "$pid" 2>/dev/null; kill -CONT "$pid" 2>/dev/null) &
watcher=$!
trap 'kill "$pid" 2>/dev/null; kill -CONT "$pid" 2>/dev/null' TERM INT HUP
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; done
kill "$watcher" 2>/dev/null`;

// Generous: three members on a loaded 2-core machine elect slowly.
const READY_WITHIN_MS = 30_000;
const DEFAULT_STOP_GRACE_MS = 5_000;

/** Tries at a new cluster whose chosen ports were taken before etcd could bind them. */
const START_ATTEMPTS = 3;

/** A member exited at start because an address it was given was in use. */
class PortTakenError extends Error {}

/**
 * Starts an etcd cluster of `members` members on 127.0.0.1 and resolves once
 * every member says it is healthy (a leader is elected and it serves).
 * Rejects, with nothing left running, if a member exits first or the cluster
 * is not healthy within 30 s, naming the log to read.
 *
 * A port is free when it is chosen, not always when etcd binds it a moment
 * later (etcd cannot pick one and say which): under parallel tests another
 * listener or an outgoing connection can take it in between, and the member
 * exits with "address already in use" (seen in CI). A new cluster is then
 * started again on fresh ports, its members' data removed first, up to
 * START_ATTEMPTS times; a cluster whose data was there before the call is
 * never wiped, and fails instead.
 */
export async function startEtcdCluster(options: EtcdClusterOptions): Promise<EtcdCluster> {
  const binary = options.binary ?? findEtcd();
  if (binary === undefined) throw new Error('no etcd on PATH (Debian: apt-get install etcd-server)');
  const version = /etcd Version: (\S+)/.exec(execFileSync(binary, ['--version'], { encoding: 'utf8' }))?.[1] ?? '?';
  mkdirSync(options.logDir, { recursive: true });
  const names = Array.from({ length: options.members }, (_, index) => `etcd-${index + 1}`);
  const dataDirs = names.map((name) => join(options.dataDir, name));
  const isNew = !dataDirs.some((dataDir) => existsSync(dataDir));
  for (let attempt = 1; ; attempt++) {
    try {
      return await startMembers(binary, version, names, options);
    } catch (error) {
      if (!(error instanceof PortTakenError) || !isNew || attempt === START_ATTEMPTS) throw error;
      for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

async function startMembers(
  binary: string,
  version: string,
  names: readonly string[],
  options: EtcdClusterOptions,
): Promise<EtcdCluster> {
  const choosePort = options.choosePort ?? freePort;
  const specs: MemberSpec[] = [];
  for (const name of names) {
    specs.push({
      name,
      client: `127.0.0.1:${await choosePort()}`,
      peer: `127.0.0.1:${await choosePort()}`,
      dataDir: join(options.dataDir, name),
      log: join(options.logDir, `${name}.log`),
    });
  }
  // Where this attempt's lines begin in each (appended) log.
  const logStarts = specs.map((spec) => (existsSync(spec.log) ? statSync(spec.log).size : 0));
  // A token of this cluster's own: members of another cluster that reused a
  // port never join this one.
  const token = `fencer-${randomUUID()}`;
  const initialCluster = specs.map((spec) => `${spec.name}=http://${spec.peer}`).join(',');
  const members = specs.map((spec) => new Member(binary, spec, memberArgs(spec, initialCluster, token)));
  const stop = async (graceMs = DEFAULT_STOP_GRACE_MS) => {
    await Promise.all(members.map((member) => member.stop(graceMs)));
  };
  try {
    // All at once: a member of three waits for its peers before it serves.
    await Promise.all(members.map((member) => member.start()));
    const deadline = performance.now() + READY_WITHIN_MS;
    for (const member of members) {
      while (!(await answers(member.endpoint, '/health'))) {
        member.throwIfExited();
        if (performance.now() > deadline)
          throw new Error(`etcd was not healthy within ${READY_WITHIN_MS} ms (log: ${member.log})`);
        await sleep(50);
      }
    }
  } catch (error) {
    await stop(2_000);
    const taken = specs.some(
      (spec, index) =>
        existsSync(spec.log) && readFileSync(spec.log).subarray(logStarts[index]).includes('address already in use'),
    );
    throw taken ? new PortTakenError((error as Error).message) : error;
  }
  return { endpoints: specs.map((spec) => spec.client), members, version, stop };
}

interface MemberSpec {
  readonly name: string;
  readonly client: string;
  readonly peer: string;
  readonly dataDir: string;
  readonly log: string;
}

function memberArgs(spec: MemberSpec, initialCluster: string, token: string): string[] {
  const client = `http://${spec.client}`;
  const peer = `http://${spec.peer}`;
  return [
    '--name',
    spec.name,
    '--data-dir',
    spec.dataDir,
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    initialCluster,
    '--initial-cluster-token',
    token,
    // Ignored once the data directory holds a member: a restart rejoins.
    '--initial-cluster-state',
    'new',
    '--experimental-enable-lease-checkpoint',
    '--experimental-enable-lease-checkpoint-persist',
    '--logger',
    'zap',
    '--log-level',
    'warn',
  ];
}

class Member implements EtcdMember {
  readonly name: string;
  readonly endpoint: string;
  readonly log: string;
  readonly #peer: string;
  #shell: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #pid = 0;

  constructor(
    private readonly binary: string,
    spec: MemberSpec,
    private readonly args: readonly string[],
  ) {
    this.name = spec.name;
    this.endpoint = spec.client;
    this.#peer = spec.peer;
    this.log = spec.log;
  }

  get pid(): number {
    return this.#pid;
  }

  /** Spawns etcd under its shell and resolves with etcd's pid known. */
  async start(): Promise<void> {
    const logFd = openSync(this.log, 'a');
    let shell: ChildProcess;
    try {
      shell = spawn('sh', ['-c', WRAPPER, 'etcd', this.binary, ...this.args], { stdio: ['pipe', 'pipe', logFd] });
    } finally {
      closeSync(logFd);
    }
    this.#shell = shell;
    this.#exited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
    this.#pid = await new Promise<number>((resolve, reject) => {
      createInterface({ input: shell.stdout! }).once('line', (line) => resolve(Number(line)));
      void this.#exited.then(() => reject(new Error(`${this.name} exited before it started (log: ${this.log})`)));
    });
  }

  throwIfExited(): void {
    const shell = this.#shell;
    if (shell && (shell.exitCode !== null || shell.signalCode !== null))
      throw new Error(`${this.name} exited (log: ${this.log})`);
  }

  async kill(signal: 'SIGKILL' | 'SIGSTOP' | 'SIGCONT' | 'SIGTERM'): Promise<void> {
    signalQuietly(this.#pid, signal);
    // The shell's wait returns when etcd is gone, and then the shell exits.
    if (signal === 'SIGKILL') await this.#exited;
    if (signal === 'SIGSTOP' || signal === 'SIGCONT') await untilStopped(this.#pid, signal === 'SIGSTOP');
  }

  async restart(): Promise<void> {
    await this.stop(DEFAULT_STOP_GRACE_MS);
    await this.start();
    const deadline = performance.now() + READY_WITHIN_MS;
    // The peer address, not the client one: that one answers only once a quorum runs.
    while (!(await answers(this.#peer, '/version'))) {
      this.throwIfExited();
      if (performance.now() > deadline)
        throw new Error(
          `${this.name} did not answer on its peer address within ${READY_WITHIN_MS} ms of its restart (log: ${this.log})`,
        );
      await sleep(50);
    }
  }

  /**
   * Stops etcd and its shell (the shell's SIGTERM path). After graceMs etcd
   * is SIGKILLed, and the shell, its parent, still reaps it before exiting:
   * killing the shell too would leave etcd to be reaped by whoever adopts
   * it, so it could outlive this call (a zombie that kill(pid, 0) still
   * finds). Only a shell that lingers another graceMs is SIGKILLed.
   */
  async stop(graceMs: number): Promise<void> {
    const shell = this.#shell;
    if (!shell) return;
    shell.stdin?.end();
    const timers = [
      setTimeout(() => signalQuietly(this.#pid, 'SIGKILL'), graceMs),
      setTimeout(() => shell.kill('SIGKILL'), 2 * graceMs),
    ];
    await this.#exited;
    for (const timer of timers) clearTimeout(timer);
  }
}

async function answers(endpoint: string, path: '/health' | '/version'): Promise<boolean> {
  try {
    const response = await fetch(`http://${endpoint}${path}`, { signal: AbortSignal.timeout(1_000) });
    if (!response.ok) return false;
    return path === '/version' || ((await response.json()) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

/**
 * Waits (at most 5 s) until /proc says `pid` is stopped, or runs again:
 * every thread of a stopped Go process has stopped, so etcd answers nothing.
 */
async function untilStopped(pid: number, stopped: boolean): Promise<void> {
  const deadline = performance.now() + 5_000;
  for (;;) {
    let state: string | undefined;
    try {
      // The state letter follows the command name in parentheses, which may hold spaces.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    } catch {
      return; // gone, or no /proc: nothing to wait on
    }
    if ((state === 'T') === stopped) return;
    if (performance.now() > deadline)
      throw new Error(`etcd (pid ${pid}) did not ${stopped ? 'stop' : 'continue'} within 5 s`);
    await sleep(5);
  }
}

/** A TCP port free on 127.0.0.1 right now (etcd cannot be told to pick one and say which). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  if (pid === 0) return;
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
