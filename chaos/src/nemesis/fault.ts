// What every nemesis is: a fault that starts, heals, and reports what it did
// as a record on the one monotonic clock the chaos history uses, so a
// checker can line faults up with the operations they overlapped.

/** Every kind of fault the chaos suite can inject. */
export const NEMESIS_KINDS = [
  'partition',
  'blackhole',
  'reply-loss',
  'request-loss',
  'latency',
  'reset-peer',
  'isolate',
  'flap',
  'pause',
  'crash',
  'crash-wipe',
  'split-brain',
  'clock-skew',
  'kill-leader',
  'pause-leader',
  'cut-from-etcd',
  'kill-etcd',
  'kill-etcd-majority',
] as const;

/** One kind of fault. */
export type NemesisKind = (typeof NEMESIS_KINDS)[number];

/** What a fault acts on: a link (its Toxiproxy proxy name) or a process (a service name, or `pid N`). */
export type FaultTarget = { readonly link: string } | { readonly process: string };

/**
 * One fault, start to heal. [startMs, endMs] is on performance.now() and
 * covers the fault: from just before it was injected to just after it was
 * healed, so any operation outside that window never saw it.
 */
export type FaultRecord = FaultTarget & {
  readonly name: NemesisKind;
  readonly startMs: number;
  readonly endMs: number;
  /** What was done, in words: the toxics, the signal and pids, the addresses. */
  readonly detail: string;
};

/** A fault as an object: start() injects it, heal() removes it. */
export interface Nemesis {
  readonly kind: NemesisKind;
  readonly target: FaultTarget;
  /** Injects the fault; rejects if it is already active, or if injecting failed (then nothing stays injected). */
  start(): Promise<void>;
  /**
   * Removes the fault and resolves with its record. Idempotent: healing a
   * healed (or never started) nemesis changes nothing and resolves with the
   * last record, if any. If healing fails it rejects and stays active, so
   * heal() can be tried again. After a heal, start() begins a new episode.
   */
  heal(): Promise<FaultRecord | undefined>;
}

/** What injecting a fault did, and how to take it back (resolving with anything worth adding to the detail). */
export interface Injected {
  readonly detail: string;
  undo(): Promise<string | void>;
}

/**
 * A Nemesis from its one move: `inject` applies the fault and returns how to
 * undo it. Starts and heals run one at a time in call order, so a heal()
 * called while start() is still injecting heals what it injected.
 */
export function defineNemesis(kind: NemesisKind, target: FaultTarget, inject: () => Promise<Injected>): Nemesis {
  let queue: Promise<unknown> = Promise.resolve();
  let active: (Injected & { startMs: number }) | undefined;
  let last: FaultRecord | undefined;
  const serially = <T>(step: () => Promise<T>): Promise<T> => {
    const result = queue.then(step);
    queue = result.catch(() => undefined);
    return result;
  };
  return {
    kind,
    target,
    start: () =>
      serially(async () => {
        if (active) throw new Error(`${kind} on ${describeTarget(target)} is already active`);
        const startMs = performance.now();
        active = { ...(await inject()), startMs };
      }),
    heal: () =>
      serially(async () => {
        if (!active) return last;
        const more = await active.undo();
        last = {
          name: kind,
          ...target,
          startMs: active.startMs,
          endMs: performance.now(),
          detail: more ? `${active.detail}; ${more}` : active.detail,
        };
        active = undefined;
        return last;
      }),
  };
}

/** A target in words, for messages. */
function describeTarget(target: FaultTarget): string {
  return 'link' in target ? `link ${target.link}` : `process ${target.process}`;
}
