// A `fencer worker` child, seen from its supervisor: commands go in on its
// stdin, its JSON events come back one per line, and a caller waits on the
// event it needs rather than on time.
import type { ChildProcess } from 'node:child_process';
import type { WorkerEvent } from '@fencer/worker';
import { fencerBin } from './fencer-bin.js';
import { spawnReady, stopChild } from './spawn.js';

/** A worker event as printed: the event and the time (shared clock, ms) it was printed at. */
export type StampedWorkerEvent = WorkerEvent & { readonly atMs: number };

/** How to start a worker: where it works, as whom, and any further `fencer worker` flags. */
export interface WorkerProcessOptions {
  /** `--coordinator`: HOST:PORT, or several replicas' comma-separated (H7). */
  readonly coordinator: string;
  /** `--sink`: HOST:PORT, or several sharded sinks' comma-separated (P3). */
  readonly sink: string;
  readonly owner: string;
  /** The worker's bearer token file; absent: `--insecure` (no token: a client certificate in `args` may still name it). */
  readonly tokenFile?: string;
  /** More flags, e.g. ['--commands', '--ttl-ms', '800']. */
  readonly args?: readonly string[];
  /** Added to its environment, e.g. a fake clock's LD_PRELOAD (see @fencer/chaos). */
  readonly env?: NodeJS.ProcessEnv;
  /** Each event as it arrives: where a caller sees every event of a long run (the chaos harness records calls here). */
  readonly onEvent?: (event: StampedWorkerEvent) => void;
  /**
   * How many of the latest events `events` keeps (default
   * DEFAULT_KEPT_EVENTS): a worker that runs for an hour prints millions,
   * and its supervisor must not hold them all.
   */
  readonly keptEvents?: number;
}

/** How many of its latest events a WorkerProcess keeps unless told otherwise: more than any scripted test reads. */
export const DEFAULT_KEPT_EVENTS = 1_000;

/** A running worker. */
export interface WorkerProcess {
  readonly owner: string;
  readonly child: ChildProcess;
  /** The latest events, in order: at most WorkerProcessOptions.keptEvents; older ones are let go. */
  readonly events: readonly StampedWorkerEvent[];
  /** The tail of what the worker wrote to stderr (its errors). */
  stderr(): string;
  /** Sends one command line (with --commands). */
  send(command: string): void;
  /**
   * Resolves with the first event of the kind (or one of the kinds) not yet returned by next() that matches,
   * and moves past it; rejects if none arrives within `timeoutMs` or the
   * worker exits first. An event let go from `events` before anyone waited for it is not seen.
   */
  next<K extends StampedWorkerEvent['event']>(
    event: K | readonly K[],
    options?: {
      readonly where?: (event: Extract<StampedWorkerEvent, { event: K }>) => boolean;
      readonly timeoutMs?: number;
    },
  ): Promise<Extract<StampedWorkerEvent, { event: K }>>;
  /** SIGTERM (the worker releases its lease and exits), SIGKILL after graceMs. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `fencer worker` and resolves once it printed its ready line. */
export async function startWorker(options: WorkerProcessOptions): Promise<WorkerProcess> {
  const events: StampedWorkerEvent[] = [];
  const kept = options.keptEvents ?? DEFAULT_KEPT_EVENTS;
  if (!(Number.isInteger(kept) && kept >= 1))
    throw new RangeError(`keptEvents must be a positive integer, not ${kept}`);
  const waiters = new Set<() => void>();
  let cursor = 0;
  let stderr = '';
  const started = await spawnReady(
    fencerBin(),
    [
      'worker',
      '--coordinator',
      options.coordinator,
      '--sink',
      options.sink,
      '--owner',
      options.owner,
      ...(options.tokenFile === undefined ? ['--insecure'] : ['--token-file', options.tokenFile]),
      ...(options.args ?? []),
    ],
    {
      ...(options.env ? { env: options.env } : {}),
      onStderr: (text) => (stderr = (stderr + text).slice(-8_192)),
      onStdoutLine: (line) => {
        let event: StampedWorkerEvent;
        try {
          event = JSON.parse(line) as StampedWorkerEvent;
        } catch {
          return;
        }
        events.push(event);
        // A waiter saw every event before this one as it came; the oldest can go.
        if (events.length > kept) {
          events.shift();
          cursor = Math.max(0, cursor - 1);
        }
        options.onEvent?.(event);
        for (const wake of waiters) wake();
      },
    },
  );
  let gone = false;
  void started.exited.then(() => {
    gone = true;
    for (const wake of waiters) wake();
  });

  return {
    owner: options.owner,
    child: started.child,
    events,
    exited: started.exited,
    stderr: () => stderr,
    send: (command) => started.child.stdin!.write(command + '\n'),
    stop: (graceMs = 5_000) => stopChild(started, graceMs),
    next: (event, { where, timeoutMs = 15_000 } = {}) =>
      new Promise((resolve, reject) => {
        const check = () => {
          for (let i = cursor; i < events.length; i++) {
            const candidate = events[i]!;
            const kinds: readonly string[] = typeof event === 'string' ? [event] : event;
            if (kinds.includes(candidate.event) && (where?.(candidate as never) ?? true)) {
              cursor = i + 1;
              finish();
              resolve(candidate as never);
              return;
            }
          }
          if (gone) {
            finish();
            reject(
              new Error(
                `worker ${options.owner} exited before "${String(event)}"${stderr ? `: ${stderr.trim()}` : ''}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`worker ${options.owner} printed no "${String(event)}" within ${timeoutMs} ms`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
  };
}
