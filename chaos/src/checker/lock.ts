// The lock model (LOCK): each resource's lease calls are checked against a
// sequential fenced mutex with leases, the way Jepsen checks Hazelcast's
// FencedLock. A Wing–Gong search, memoized as in Lowe's, looks for one order
// of the calls that a correct coordinator could have produced, with each call
// taking effect at an instant between its sending and its answer. The token
// order (L6: every minted token is above every token granted before it) is
// always judged. When leases are exclusive, three more rules are judged: no
// grant while a lease is certainly valid (L2), only the latest unreleased
// grant renews (L4), and a release frees only the latest grant (L5).
//
// Those three hold only while every grant goes through one coordinator's
// memory. Around a period when it did not (unsharedPeriods: a coordinator
// restarted with its data wiped forgot its holders; a rival coordinator
// granted from its own), L3 lets a coordinator grant over a lease it never
// knew of. So a grant whose call overlaps such a period, or the TTL after
// it (by when every lease the other memory knew has run out), is judged on
// the token order only and holds no lease in the model; and a Renew or
// Release of a grant made before or during such a period, answered after
// it began, only shows its token was granted (the coordinator that answers
// it may not hold what the model calls the latest grant). The token order
// is judged throughout: every fresh grant moved the sink's fence, which
// only rises (L3, F4), so the grants still have one order of rising tokens.
//
// Time: the coordinator starts a lease's TTL on its own clock when it grants
// or renews (L1), which is after the call was sent, and after every call
// that took effect before it. So a lease is certainly valid until the
// latest sending among its grant and the renewals placed so far plus its
// TTL (less, if the coordinator's clock may run fast: coordinatorClock),
// and only a grant that must fall inside that window breaks L2.
//
// Unknown outcomes may or may not have taken effect. The search tries both
// only where the effect can explain a later answer: an Acquire whose token
// a replay revealed, or a Release. It leaves out every other unknown call,
// whose effect could only make the model stricter. It also tries only one
// order of calls whose orders all end alike: witnesses of a token already
// shown, and renewals of one lease. Calls pipelined through a slow link
// keep many of those in flight at once, and their orders are what made a
// search too large to finish.
import { groupBy, holderOf, named, responseOf, text, tokenOf, type Grant } from './fields.js';
import type { Operation } from './history.js';
import type { Unchecked, Violation } from './round.js';

/** How the lock model judges a history. */
export interface LockOptions {
  /** How much the processes' readings of the shared clock may disagree (ms). */
  readonly clockUncertaintyMs: number;
  /** Judge L2, L4 and L5 as well as the token order (L6). */
  readonly exclusive: boolean;
  /** Search steps allowed for one stretch of overlapping calls; past it, the rest of the resource is reported unchecked. */
  readonly stepBudget: number;
  /** How fast the coordinator's clock may run: over any stretch, at most maxRate times it plus aheadMs. */
  readonly coordinatorClock: { readonly maxRate: number; readonly aheadMs: number };
  /**
   * Periods (ms, shared clock) when grants did not all go through one
   * coordinator's memory: L2, L4 and L5 are not judged around them (see
   * the top of this file). Default none.
   */
  readonly unsharedPeriods?: readonly Period[];
}

/** A stretch of time on the shared clock, in ms. */
export interface Period {
  readonly startMs: number;
  readonly endMs: number;
}

/** One lease call as the model sees it. */
interface LeaseCall {
  readonly op: Operation;
  /**
   * `grant` mints `token` for `holder` (a fresh Acquire). `renew` and
   * `release` act on the latest grant, which must be (holder, token).
   * `witness` shows only that `token` was granted by then: an R1 replay, or
   * a Renew or Release that the model does not follow.
   */
  readonly kind: 'grant' | 'renew' | 'release' | 'witness';
  readonly holder: string;
  readonly token: bigint;
  /** For a grant or renewal: how long the lease is certainly valid after the call was sent (ms). */
  readonly ttlMs: number;
  /** Whether it took effect (ok). An unknown call only may have. */
  readonly certain: boolean;
  /** A grant near an unshared period: L2 is not judged on it (and its ttlMs is 0, so it holds no lease). */
  readonly unshared?: boolean;
  /** The latest instant its effect can be placed at (ms, shared clock). */
  readonly endMs: number;
  /** For a grant: the call that showed it made, answered before the grant itself, whose answer bounds `endMs`. */
  readonly shownBy?: Operation;
}

/** The latest grant of a resource, as a correct coordinator holds it. */
interface Lease {
  readonly holder: string;
  readonly token: bigint;
  readonly grantedBy: Operation;
  /** The grant or renewal sent last among those placed, and until when the lease is therefore certainly valid (ms, shared clock). */
  readonly validBy: Operation;
  readonly validUntilMs: number;
  readonly releasedBy?: Operation;
}

/** The model's state for one resource. The operations in it are kept for messages and are not part of its identity. */
interface MutexState {
  /** The highest token known granted, its holder, and the call that showed it. */
  readonly top: bigint;
  readonly topHolder: string;
  readonly topBy?: Operation;
  /** Followed only when leases are exclusive. */
  readonly lease?: Lease;
}

type Refusal = 'token' | 'held' | 'not-latest';

const INITIAL: MutexState = { top: 0n, topHolder: '' };

// V2 keeps control characters out of owner ids.
const stateKey = (s: MutexState): string => {
  const l = s.lease;
  const lease = l ? `${l.holder}\u0000${l.token}\u0000${l.validUntilMs}\u0000${l.releasedBy ? 1 : 0}` : '';
  return `${s.top}\u0000${s.topHolder}\u0000${lease}`;
};

const raised = (s: MutexState, c: LeaseCall): MutexState =>
  c.token > s.top ? { ...s, top: c.token, topHolder: c.holder, topBy: c.op } : s;

/** The call's effect on the model at the earliest instant from `fromMs` on, or why a correct coordinator could not have given its answer there. */
function place(s: MutexState, c: LeaseCall, fromMs: number): { state: MutexState; atMs: number } | Refusal {
  switch (c.kind) {
    case 'witness':
      return { state: raised(s, c), atMs: fromMs };
    case 'grant': {
      // L6. The same token to another holder is S1's finding, not this one's.
      if (c.token < s.top || (c.token === s.top && c.holder === s.topHolder)) return 'token';
      // L2: not before the lease in force has certainly ended, unless it was released.
      const l = s.lease;
      const atMs = l && !l.releasedBy && !c.unshared ? Math.max(fromMs, l.validUntilMs) : fromMs;
      if (atMs > c.endMs) return 'held';
      const validUntilMs = c.op.invokedMs + c.ttlMs;
      const lease: Lease = { holder: c.holder, token: c.token, grantedBy: c.op, validBy: c.op, validUntilMs };
      return { state: { top: c.token, topHolder: c.holder, topBy: c.op, lease }, atMs };
    }
    case 'renew':
    case 'release': {
      const l = s.lease;
      // L4: a released lease is over and cannot be renewed. L5: releasing it again is allowed.
      if (l?.holder !== c.holder || l.token !== c.token || (c.kind === 'renew' && l.releasedBy)) return 'not-latest';
      // L1: a renewal takes effect after every call placed before it, so
      // the TTL runs from the latest sending among them, not only its own.
      const validBy = c.op.invokedMs >= l.validBy.invokedMs ? c.op : l.validBy;
      const lease: Lease =
        c.kind === 'renew' ? { ...l, validBy, validUntilMs: validBy.invokedMs + c.ttlMs } : { ...l, releasedBy: c.op };
      return { state: { ...s, lease }, atMs: fromMs };
    }
  }
}

/**
 * Findings of the lock model, at most one per resource: either a violation,
 * the first violating operation (`first`) with the call that conflicts with
 * it, or a stretch of overlapping calls too large to search, unchecked:
 * neither safe nor unsafe, never passed silently. After either, the model
 * judges nothing later on that resource. A resource with a call that ended
 * before it was sent is unchecked as a whole. Assumes the history holds
 * every lease call made to its resources.
 */
export function checkLock(
  grants: readonly Grant[],
  operations: readonly Operation[],
  options: LockOptions,
): { violations: Violation[]; unchecked: Unchecked[] } {
  const found: Violation[] = [];
  const unchecked: Unchecked[] = [];
  const byResource = leaseCalls(grants, operations, options);
  const firstInverted = firstInvertedCalls(operations);
  for (const resource of [...new Set([...byResource.keys(), ...firstInverted.keys()])].sort()) {
    // A call that ended before it was sent has no instant to take effect at:
    // the history's clocks disagree, and where that call might have taken
    // effect is unknown, so no order of the resource's calls can be judged.
    const inverted = firstInverted.get(resource);
    if (inverted) {
      const ms = (inverted.invokedMs - inverted.completedMs).toFixed(1);
      unchecked.push({
        rule: 'LOCK',
        message: `${resource}: unchecked: ${named(inverted)} ended ${ms} ms before it was sent, so the history's clocks disagree`,
        operations: [inverted.id],
      });
      continue;
    }
    let states = [INITIAL];
    for (const stretch of quiescent(byResource.get(resource)!)) {
      const result = search(stretch, states, options.stepBudget);
      if (result === 'exhausted') {
        const from = stretch[0]!.op;
        unchecked.push({
          rule: 'LOCK',
          message: `${resource}: unchecked from ${named(from)} on: ${stretch.length} overlapping lease calls need more than ${options.stepBudget} search steps`,
          operations: [from.id],
        });
        break;
      }
      if (result.ends.length === 0) {
        // Every order dead-ends somewhere, so the search met at least one dead end.
        found.push(explain(resource, result.dead!));
        break;
      }
      states = result.ends;
    }
  }
  return { violations: found, unchecked };
}

/** Each resource's first lease call, by sending, that the history has ending before it was sent. */
function firstInvertedCalls(operations: readonly Operation[]): Map<string, Operation> {
  const first = new Map<string, Operation>();
  for (const op of operations) {
    if (!LEASE_METHODS.has(op.method) || op.completedMs >= op.invokedMs) continue;
    const resource = text(op.request.resource);
    const earlier = first.get(resource);
    if (!earlier || op.invokedMs < earlier.invokedMs) first.set(resource, op);
  }
  return first;
}

const LEASE_METHODS: ReadonlySet<string> = new Set(['Acquire', 'Renew', 'Release']);

/** Each resource's lease calls as the model takes them, ordered by sending. */
function leaseCalls(
  grants: readonly Grant[],
  operations: readonly Operation[],
  options: LockOptions,
): Map<string, LeaseCall[]> {
  type Call = LeaseCall & { readonly resource: string };
  const { exclusive } = options;
  const { maxRate, aheadMs } = options.coordinatorClock;
  if (!(maxRate > 0 && aheadMs >= 0)) {
    throw new RangeError(`coordinatorClock needs maxRate > 0 and aheadMs >= 0, not ${maxRate} and ${aheadMs}`);
  }
  // A TTL of T on the coordinator's clock lasts at least this long on the shared clock.
  const certainMs = (ttlMs: number) => Math.max(0, (ttlMs - aheadMs) / maxRate);
  const grantKey = (c: { readonly resource: string; readonly holder: string; readonly token: bigint }) =>
    `${c.resource}\u0000${c.holder}\u0000${c.token}`;
  const answered = (op: Operation) => op.completedMs + options.clockUncertaintyMs;
  const leaseTtlOf = (op: Operation) =>
    Number(text((responseOf(op).lease as Record<string, unknown> | undefined)?.ttl_ms)) || 0;
  // The lease an ok call answered lasts its TTL from the call's sending (L3, L4).
  const ttlOf = (op: Operation) => (exclusive ? certainMs(leaseTtlOf(op)) : 0);
  const unshared = unsharedWindows(operations, options, (op) => certainMs(Math.max(leaseTtlOf(op), requestTtlOf(op))));
  // Whether [fromMs, toMs] meets one of the resource's unshared windows.
  const nearUnshared = (resource: string, fromMs: number, toMs: number) =>
    (unshared.get(resource) ?? []).some((w) => fromMs <= w.endMs && toMs >= w.startMs);
  const grantCall = (g: Omit<Call, 'kind' | 'ttlMs' | 'endMs'>, ttlMs: number, endMs: number): Omit<Call, 'endMs'> =>
    nearUnshared(g.resource, g.op.invokedMs, endMs)
      ? { ...g, kind: 'grant', ttlMs: 0, unshared: true }
      : { ...g, kind: 'grant', ttlMs };
  const calls: Call[] = grants
    .filter((g) => g.fresh)
    .map((g) => ({ ...grantCall({ ...g, certain: true }, ttlOf(g.op), answered(g.op)), endMs: answered(g.op) }));

  // An unknown Acquire may have minted the token that a replay of its
  // request id later answered (R1). Unless an ok Acquire of that id was
  // fresh: then that one minted it.
  const acquiresOf = groupBy(
    grants.filter((g) => g.op.method === 'Acquire'),
    (g) => `${g.resource}\u0000${text(g.op.request.request_id)}`,
  );
  const maybeGrants: Omit<Call, 'endMs'>[] = [];
  for (const op of operations) {
    if (!exclusive || op.method !== 'Acquire' || op.outcome.type !== 'unknown') continue;
    const resource = text(op.request.resource);
    const same = acquiresOf.get(`${resource}\u0000${text(op.request.request_id)}`) ?? [];
    if (same.length === 0 || same.some((g) => g.fresh)) continue;
    const { holder, token } = same[0]!;
    maybeGrants.push(
      grantCall({ op, resource, holder, token, certain: false }, certainMs(requestTtlOf(op)), answered(op)),
    );
  }

  // Renews and Releases of a grant the model follows act on it; any other
  // Renew or Release, and every replay, only shows that its token was
  // granted. The model follows a grant from its sending until the next
  // unshared window: a Renew or Release answered later may have been
  // answered by a memory in which it was not the latest grant.
  const followedFrom = new Map<string, number>();
  for (const c of [...calls, ...maybeGrants]) {
    const k = grantKey(c);
    followedFrom.set(k, Math.min(followedFrom.get(k) ?? Infinity, c.op.invokedMs));
  }
  const followed = (c: Parameters<typeof grantKey>[0]) => exclusive && followedFrom.has(grantKey(c));
  const follows = (c: Parameters<typeof grantKey>[0], untilMs: number) =>
    followed(c) && !nearUnshared(c.resource, followedFrom.get(grantKey(c))!, untilMs);
  for (const g of grants.filter((g) => !g.fresh)) {
    const kind = g.op.method === 'Renew' && follows(g, answered(g.op)) ? 'renew' : 'witness';
    calls.push({ ...g, kind, ttlMs: ttlOf(g.op), certain: true, endMs: answered(g.op) });
  }
  const maybeReleases: Omit<Call, 'endMs'>[] = [];
  for (const op of operations) {
    if (op.method !== 'Release' || op.outcome.type === 'fail') continue;
    const release = {
      op,
      resource: text(op.request.resource),
      kind: 'release' as const,
      holder: holderOf(op.request),
      token: tokenOf(op.request.token),
      ttlMs: 0,
    };
    if (op.outcome.type === 'unknown') {
      // Only ever lets more orders through, so kept whenever its grant is followed at all.
      if (followed(release)) maybeReleases.push({ ...release, certain: false });
    } else if (op.outcome.response.released === true) {
      const kind = follows(release, answered(op)) ? 'release' : 'witness';
      calls.push({ ...release, kind, certain: true, endMs: answered(op) });
    }
  }

  // Past these instants an unknown call's effect explains nothing more, and
  // can only make the model stricter. So its window ends there, which
  // leaves quiet moments to split the search at. An unknown grant helps only
  // the Renews and Releases that need it to be the latest grant. An unknown
  // Release helps only while its lease is certainly valid.
  const dependents = groupBy(
    calls.filter((c) => c.kind === 'renew' || c.kind === 'release'),
    grantKey,
  );
  const leases = groupBy(
    [...calls, ...maybeGrants].filter((c) => c.kind === 'grant' || c.kind === 'renew'),
    grantKey,
  );
  const latest = <T>(items: readonly T[] | undefined, at: (item: T) => number) =>
    (items ?? []).reduce((max, item) => Math.max(max, at(item)), -Infinity);
  // Unknown calls of one grant have one effect, and their windows one end:
  // a Release retried through an outage, or an Acquire retried under its
  // request id. At most one of them matters (a second grant of the same
  // token is refused, a second release changes nothing), so the search
  // takes the one sent first, whose window holds all the others'. Taken one
  // by one, 16 unknown Releases of one lease made 2^16 sets of calls left
  // and exhausted the step budget.
  const firstSent = (maybe: readonly Omit<Call, 'endMs'>[]) =>
    [...groupBy(maybe, grantKey).values()].map((same) =>
      same.reduce((first, c) => (c.op.invokedMs < first.op.invokedMs ? c : first)),
    );
  for (const c of firstSent(maybeGrants)) {
    calls.push({ ...c, endMs: latest(dependents.get(grantKey(c)), (d) => d.endMs) });
  }
  for (const c of firstSent(maybeReleases)) {
    calls.push({ ...c, endMs: latest(leases.get(grantKey(c)), (l) => l.op.invokedMs + l.ttlMs) });
  }

  // A witness of a token that one certain grant minted, and no other call,
  // shows only that the grant came by the witness's answer: placed before
  // the grant it would refuse it, and after it it changes nothing. So it
  // folds into that grant, which it may make answer earlier. One sent
  // after its grant's answer stays, to be judged with it.
  const grantsOf = groupBy(
    calls.filter((c) => c.kind === 'grant'),
    (c) => `${c.resource}\u0000${c.token}`,
  );
  const soleGrant = (c: Call) => {
    const same = grantsOf.get(`${c.resource}\u0000${c.token}`);
    return same?.length === 1 && same[0]!.certain && same[0]!.holder === c.holder ? same[0] : undefined;
  };
  const shownBy = new Map<Call, Call>();
  const folded = calls.filter((c) => {
    const grant = c.kind === 'witness' ? soleGrant(c) : undefined;
    if (!grant || c.endMs < grant.op.invokedMs) return true;
    if (c.endMs < (shownBy.get(grant) ?? grant).endMs) shownBy.set(grant, c);
    return false;
  });
  const shown = (c: Call): Call => {
    const witness = shownBy.get(c);
    return witness ? { ...c, endMs: witness.endMs, shownBy: witness.op } : c;
  };

  const byResource = groupBy(
    folded.map(shown).filter((c) => c.endMs >= c.op.invokedMs),
    (c) => c.resource,
  );
  for (const list of byResource.values()) list.sort((a, b) => a.op.invokedMs - b.op.invokedMs || a.op.id - b.op.id);
  return byResource;
}

/** The TTL a lease call asks for (ms); 0 if none (a Renew that keeps its TTL). */
const requestTtlOf = (op: Operation) => Number(text(op.request.ttl_ms)) || 0;

/**
 * Each resource's unshared windows: every unshared period, from its start
 * until the longest lease of the resource (`ttlOf` of any of its Acquires
 * and Renews, on the shared clock) has run out after its end, widened by
 * the clock uncertainty either way. Past that, no lease granted by the
 * memory that was lost or by the rival can still be valid.
 */
function unsharedWindows(
  operations: readonly Operation[],
  options: LockOptions,
  ttlOf: (op: Operation) => number,
): Map<string, Period[]> {
  const periods = options.unsharedPeriods ?? [];
  const windows = new Map<string, Period[]>();
  if (periods.length === 0) return windows;
  const longest = new Map<string, number>();
  for (const op of operations) {
    if (op.method !== 'Acquire' && op.method !== 'Renew') continue;
    const resource = text(op.request.resource);
    longest.set(resource, Math.max(longest.get(resource) ?? 0, ttlOf(op)));
  }
  const margin = options.clockUncertaintyMs;
  for (const [resource, ttlMs] of longest) {
    windows.set(
      resource,
      periods.map((p) => ({ startMs: p.startMs - margin, endMs: p.endMs + ttlMs + margin })),
    );
  }
  return windows;
}

/**
 * Splits calls ordered by sending where a call is sent after every earlier
 * one's window has closed. Every order places all of a stretch's calls
 * before the next stretch's, so searching stretch by stretch, from each
 * state the previous one can end in, is exact.
 */
function* quiescent(calls: readonly LeaseCall[]): Generator<LeaseCall[]> {
  let stretch: LeaseCall[] = [];
  let closesMs = -Infinity;
  for (const c of calls) {
    if (c.op.invokedMs > closesMs && stretch.length > 0) {
      yield stretch;
      stretch = [];
    }
    stretch.push(c);
    closesMs = Math.max(closesMs, c.endMs);
  }
  if (stretch.length > 0) yield stretch;
}

/**
 * A point of the search. The calls not placed yet are `pending` (sent by
 * `nowMs`, still placeable) and every call from `next` on (sent later).
 * Every call placed so far was placed at or before `nowMs`.
 */
interface Node {
  readonly next: number;
  readonly pending: readonly number[];
  readonly state: MutexState;
  readonly nowMs: number;
  /** Certain calls placed so far. */
  readonly placed: number;
}

/** Where the search got stuck: the call that no order can place next, and why. */
interface DeadEnd {
  readonly placed: number;
  readonly call: LeaseCall;
  readonly refusal: Refusal;
  readonly state: MutexState;
}

/**
 * Every state in which some order of `calls` can end, starting from any of
 * `starts`, or 'exhausted' past `budget` steps. When no order exists, also
 * the deepest dead end: the most certain calls placed, and on a tie the one
 * stuck on the call sent last.
 */
function search(
  calls: readonly LeaseCall[],
  starts: readonly MutexState[],
  budget: number,
): { ends: MutexState[]; dead?: DeadEnd } | 'exhausted' {
  const n = calls.length;
  // Among the certain calls from index k on: the earliest window end, whose
  // it is, and the next earliest. No call may be placed after the first,
  // except that call itself, which is bounded by the second.
  const first = Array<number>(n + 1).fill(Infinity);
  const firstOf = Array<number>(n + 1).fill(-1);
  const second = Array<number>(n + 1).fill(Infinity);
  for (let k = n - 1; k >= 0; k--) {
    [first[k], firstOf[k], second[k]] = [first[k + 1]!, firstOf[k + 1]!, second[k + 1]!];
    const { certain, endMs } = calls[k]!;
    if (certain && endMs < first[k]!) [first[k], firstOf[k], second[k]] = [endMs, k, first[k]!];
    else if (certain && endMs < second[k]!) second[k] = endMs;
  }

  // Renewals of one lease with one TTL commute (each leaves the lease valid
  // for the TTL from the latest sending placed), so only the orders that
  // place them in their order of sending are tried: each waits for the
  // one before it. Ten of them pipelined through a slow link took 150,000
  // steps otherwise.
  const renewedAfter = Array<number>(n).fill(-1);
  const renewals = groupBy(
    [...calls.keys()].filter((i) => calls[i]!.kind === 'renew'),
    (i) => `${calls[i]!.holder}\u0000${calls[i]!.token}`,
  );
  for (const same of renewals.values()) {
    if (same.some((i) => calls[i]!.ttlMs !== calls[same[0]!]!.ttlMs)) continue;
    for (let k = 1; k < same.length; k++) renewedAfter[same[k]!] = same[k - 1]!;
  }

  const ends = new Map<string, MutexState>();
  // The earliest nowMs each (calls left, state) was reached at: a later one can do no more.
  const earliest = new Map<string, number>();
  let dead: DeadEnd | undefined;
  let steps = 0;
  for (const state of starts) {
    const stack: Node[] = [{ next: 0, pending: [], state, nowMs: -Infinity, placed: 0 }];
    for (let node = stack.pop(); node; node = stack.pop()) {
      if (++steps > budget) return 'exhausted';
      const key = leftKey(node) + stateKey(node.state);
      if ((earliest.get(key) ?? Infinity) <= node.nowMs) continue;
      earliest.set(key, node.nowMs);

      let [d1, d1Of, d2] = [first[node.next]!, firstOf[node.next]!, second[node.next]!];
      for (const j of node.pending) {
        const { certain, endMs } = calls[j]!;
        if (certain && endMs < d1) [d1, d1Of, d2] = [endMs, j, d1];
        else if (certain && endMs < d2) d2 = endMs;
      }
      if (d1 === Infinity) ends.set(stateKey(node.state), node.state);

      const candidates = [...node.pending];
      for (let k = node.next; k < n && calls[k]!.op.invokedMs <= d1; k++) candidates.push(k);
      let moved = false;
      for (const i of candidates) {
        const before = renewedAfter[i]!;
        if (before >= node.next || node.pending.includes(before)) continue;
        const call = calls[i]!;
        const fromMs = Math.max(node.nowMs, call.op.invokedMs);
        const effect = fromMs <= call.endMs ? place(node.state, call, fromMs) : undefined;
        if (effect === undefined || typeof effect === 'string' || effect.atMs > (i === d1Of ? d2 : d1)) continue;
        moved = true;
        stack.push(advance(calls, node, i, effect.state, effect.atMs));
      }
      if (moved || d1 === Infinity) continue;
      // Stuck: the certain call whose window closes first cannot be placed next.
      const call = calls[d1Of]!;
      const refusal = place(node.state, call, Math.max(node.nowMs, call.op.invokedMs));
      const deeper =
        !dead ||
        node.placed > dead.placed ||
        (node.placed === dead.placed && call.op.invokedMs > dead.call.op.invokedMs);
      if (typeof refusal === 'string' && deeper) dead = { placed: node.placed, call, refusal, state: node.state };
    }
  }
  return { ends: [...ends.values()], ...(dead ? { dead } : {}) };
}

/**
 * The node after placing call i at atMs: calls sent by then become pending,
 * unknown calls whose window closed drop out, and so does every witness of
 * a token at or below the top. That one changes nothing wherever it goes,
 * since the top only rises, so it is placed at once rather than in every
 * order with the calls around it: a lease renewed through a slow link left
 * a dozen such witnesses in flight, and their orders exhausted the budget.
 */
function advance(calls: readonly LeaseCall[], node: Node, i: number, state: MutexState, atMs: number): Node {
  const pending: number[] = [];
  let placed = node.placed + (calls[i]!.certain ? 1 : 0);
  const take = (j: number) => {
    const c = calls[j]!;
    if (j === i || c.endMs < atMs) return;
    if (c.kind === 'witness' && c.token <= state.top) placed += c.certain ? 1 : 0;
    else pending.push(j);
  };
  node.pending.forEach(take);
  let next = node.next;
  for (; next < calls.length && calls[next]!.op.invokedMs <= atMs; next++) take(next);
  return { next, pending, state, nowMs: atMs, placed };
}

/**
 * The calls not placed yet, as one key. Two nodes that have the same calls
 * left get the same key, however they got there: the run of trailing
 * indices that reaches `next` folds into it.
 */
function leftKey({ next, pending }: Node): string {
  let from = next;
  let k = pending.length;
  while (k > 0 && pending[k - 1] === from - 1) [k, from] = [k - 1, from - 1];
  return `${from}:${pending.slice(0, k).join(',')}|`;
}

/** A dead end as a finding, citing the call the violating one conflicts with and the violating one itself. */
function explain(resource: string, { call, refusal, state }: DeadEnd): Violation {
  const finding = (message: string, other: Operation | undefined): Violation => ({
    rule: 'LOCK',
    message: `${resource}: ${named(call.op)} ${message}`,
    operations: other ? [other.id, call.op.id] : [call.op.id],
    first: call.op.id,
  });
  const lease = state.lease;
  switch (refusal) {
    case 'token':
      return finding(
        `minted token ${call.token}, not above token ${state.top}, which ${named(state.topBy!)} showed granted before it (L6)`,
        state.topBy,
      );
    case 'held': {
      const { holder, token, validBy, validUntilMs } = lease!;
      const answered = call.shownBy
        ? `${named(call.shownBy)} showed #${call.op.id} granted`
        : `#${call.op.id} was answered`;
      return finding(
        `was granted token ${call.token} while ${holder} held token ${token}: ${named(validBy)} made that lease valid for ${Math.round(validUntilMs - validBy.invokedMs)} ms after it was sent, and ${answered} ${Math.round(validUntilMs - (call.shownBy ?? call.op).completedMs)} ms before that ran out (L2)`,
        validBy,
      );
    }
    case 'not-latest': {
      const [verb, rule] = call.kind === 'renew' ? ['renewed', 'L4'] : ['released', 'L5'];
      const what = `${verb} token ${call.token} of ${call.holder}, but`;
      if (!lease) return finding(`${what} nothing had been granted yet (${rule})`, undefined);
      if (lease.releasedBy && lease.holder === call.holder && lease.token === call.token) {
        return finding(`${what} ${named(lease.releasedBy)} had released it (${rule})`, lease.releasedBy);
      }
      return finding(
        `${what} the latest grant was token ${lease.token} to ${lease.holder} (${named(lease.grantedBy)}) (${rule})`,
        lease.grantedBy,
      );
    }
  }
}
