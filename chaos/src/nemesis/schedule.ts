// When each fault strikes, for how long, and where: drawn from a seeded
// generator, so a chaos run is named by its seed and replays the same
// faults at the same offsets on any machine.
import { prng } from '@fencer/common';
import { LINK_PROXY_NAMES } from '@fencer/supervisor';
import type { NemesisKind } from './fault.js';

/** One planned fault: `kind` on `target`, from `atMs` after the run starts, healed `durationMs` later. */
export interface ScheduledFault {
  readonly atMs: number;
  readonly durationMs: number;
  readonly kind: NemesisKind;
  /** A link's proxy name for network kinds; a service, worker or rival coordinator name for process kinds. */
  readonly target: string;
}

const LINKS: readonly string[] = Object.values(LINK_PROXY_NAMES);

/** Where each kind strikes unless told otherwise: every link of a cluster, and its services. */
export const DEFAULT_TARGETS: Readonly<Record<NemesisKind, readonly string[]>> = Object.freeze({
  partition: LINKS,
  blackhole: LINKS,
  'reply-loss': LINKS,
  'request-loss': LINKS,
  latency: LINKS,
  'reset-peer': LINKS,
  isolate: ['sink', 'coordinator'],
  flap: LINKS,
  pause: ['sink', 'coordinator'],
  crash: ['sink', 'coordinator'],
  'crash-wipe': ['coordinator'],
  'split-brain': ['coordinator-2'],
  'clock-skew': ['coordinator'],
  // Replica kinds, for a cluster of two replicas on three etcd members (H).
  'kill-leader': ['leader'],
  'pause-leader': ['leader'],
  'cut-from-etcd': ['coordinator-1', 'coordinator-2'],
  'kill-etcd': ['etcd-1', 'etcd-2', 'etcd-3'],
  'kill-etcd-majority': ['etcd'],
});

/** What to plan. Times in ms; ranges are [min, max], both included. */
export interface ScheduleOptions {
  readonly seed: number;
  /** Length of the run: every fault starts and heals within it. */
  readonly durationMs: number;
  /** The kinds to draw from (non-empty). */
  readonly kinds: readonly NemesisKind[];
  /** Targets per kind, replacing DEFAULT_TARGETS (e.g. worker names for `pause`). */
  readonly targets?: Partial<Readonly<Record<NemesisKind, readonly string[]>>>;
  /** Quiet time before each fault, after the heal of the one before it in its lane; default [500, 2000]. */
  readonly gapMs?: readonly [number, number];
  /** How long each fault lasts; default [500, 3000]. */
  readonly faultMs?: readonly [number, number];
  /** At most this many faults at once (one per lane), never two on one target; default 1. */
  readonly maxConcurrent?: number;
}

/**
 * The faults of a run, in start order: a pure function of its options, so
 * the same seed gives the same list. Throws RangeError for unusable options.
 */
export function schedule(options: ScheduleOptions): ScheduledFault[] {
  const gapMs = options.gapMs ?? [500, 2_000];
  const faultMs = options.faultMs ?? [500, 3_000];
  const maxConcurrent = options.maxConcurrent ?? 1;
  const targetsOf = (kind: NemesisKind) => options.targets?.[kind] ?? DEFAULT_TARGETS[kind];
  check(Number.isInteger(options.durationMs) && options.durationMs >= 0, 'durationMs must be an integer >= 0');
  check(options.kinds.length > 0, 'kinds must not be empty');
  for (const kind of options.kinds) check(targetsOf(kind).length > 0, `${kind} has no targets`);
  // A gap of at least 1 ms moves every lane forward, so the plan ends.
  checkRange('gapMs', gapMs, 1);
  checkRange('faultMs', faultMs, 0);
  check(Number.isInteger(maxConcurrent) && maxConcurrent >= 1, 'maxConcurrent must be an integer >= 1');

  // One lane per concurrent fault, each a quiet gap, a fault, a gap...; a
  // fault whose every target is busy in an earlier lane leaves its lane quiet.
  // Kinds are dealt like cards, every kind once in a random order before any
  // comes again (a kind whose targets were all busy goes back in the deal),
  // so a run long enough for a few faults of each kind has every kind.
  const random = prng(options.seed);
  const faults: ScheduledFault[] = [];
  let deal: NemesisKind[] = [];
  for (let lane = 0; lane < maxConcurrent; lane += 1) {
    for (let atMs = random.int(gapMs[0], gapMs[1]); ; atMs += random.int(gapMs[0], gapMs[1])) {
      if (deal.length === 0) deal = shuffled(options.kinds, random.int);
      const kind = deal.pop()!;
      const durationMs = random.int(faultMs[0], faultMs[1]);
      if (atMs + durationMs > options.durationMs) break;
      const busy = faults.filter((fault) => fault.atMs < atMs + durationMs && atMs < fault.atMs + fault.durationMs);
      const free = targetsOf(kind).filter((target) => !busy.some((fault) => fault.target === target));
      if (free.length > 0) faults.push({ atMs, durationMs, kind, target: random.pick(free) });
      else deal.unshift(kind);
      atMs += durationMs;
    }
  }
  // A stable sort: faults that start together stay in lane order.
  return faults.sort((a, b) => a.atMs - b.atMs);
}

/** A copy of `items` in a random order (Fisher–Yates), drawn with `int`. */
function shuffled<T>(items: readonly T[], int: (min: number, max: number) => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = int(0, i);
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new RangeError(message);
}

function checkRange(name: string, [min, max]: readonly [number, number], floor: number): void {
  check(
    Number.isInteger(min) && Number.isInteger(max) && floor <= min && min <= max,
    `${name} must be integers [min, max] with ${floor} <= min <= max`,
  );
}
