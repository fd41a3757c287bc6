// The checker of a recorded history: PROTOCOL.md's safety invariants S1–S6,
// judged on what callers were told and what the sink holds at the end, and
// the lease calls against a fenced mutex (LOCK, lock.ts).
// An operation with an unknown outcome may or may not have happened: it is
// never counted as having happened when that would accuse the system, nor
// as not having happened when that would. Real-time order between
// operations of different processes is trusted only beyond
// `clockUncertaintyMs`, since each process reads the shared clock itself.
import { firstOfEach, groupBy, named, responseOf, tokenOf, type Grant } from './fields.js';
import type { FaultPeriod, FinalState, History, Operation, StoredResult } from './history.js';
import { breaksOrder, distinctPayloads, lostWrite, staleUnder } from './invariants.js';
import { checkLock, type Period } from './lock.js';
import { callOf, callsOf, writesOf, type Call } from './records.js';
import type { Unchecked, Violation } from './round.js';

/** How a history is judged. */
export interface CheckOptions {
  /** How much the processes' readings of the shared clock may disagree, in ms (default 1). */
  readonly clockUncertaintyMs?: number;
  /**
   * A run still under way: judge only what the calls themselves show, not
   * the final state, which is empty (no S3 final fence, no stored result
   * checked; S5 only as a read that found nothing after an acknowledged
   * write; the lock model on the token order only, since a call still in
   * flight may be what freed a lease).
   */
  readonly partial?: boolean;
  /**
   * Whether the run promises exclusive leases (default true): one
   * coordinator that keeps its grants, so the lock model judges L2, L4 and
   * L5, except around the history's periods of a wiped coordinator or a
   * rival (unsharedPeriods), where L3 lets a coordinator grant over a lease
   * it never knew of and only the fence keeps that safe. False judges the
   * whole run that way: the token order (L6) only.
   */
  readonly exclusiveLeases?: boolean;
  /** Search steps the lock model may take per stretch of overlapping lease calls (default 100,000). */
  readonly lockStepBudget?: number;
  /**
   * How fast the coordinator's clock may have run against the shared clock
   * (default: at the same rate): over any stretch of time it advanced at
   * most `maxRate` times the stretch plus `aheadMs`. L1 lets a coordinator
   * whose clock runs fast end a lease early in real time, so the lock model
   * counts a lease with TTL T certainly valid for only (T - aheadMs) / maxRate
   * after its call was sent. What a clock-skew run reports (FaketimeClock's
   * bound). RangeError unless maxRate > 0 and aheadMs >= 0.
   */
  readonly coordinatorClock?: { readonly maxRate: number; readonly aheadMs: number };
}

/** A Write the sink acknowledged. */
interface AckedWrite extends Call {
  readonly replayed: boolean;
}

type Flag = (rule: Violation['rule'], message: string, operations: readonly Operation[]) => void;

// Map keys: V2 keeps control characters out of resources and result ids.
const keyOf = (resource: string, resultId: string) => `${resource}\u0000${resultId}`;
const where = (resource: string, resultId: string) => `${resource}/${resultId}`;
const quoted = (payload: string) => JSON.stringify(payload.length > 40 ? `${payload.slice(0, 40)}…` : payload);
/** What the checker found: every broken rule, and what it could not judge. Safe only when both are empty. */
export interface HistoryCheck {
  readonly violations: Violation[];
  readonly unchecked: Unchecked[];
}

const RULE_ORDER: readonly Violation['rule'][] = ['S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'LOCK', 'protocol'];

/**
 * Every violation of S1–S6, of the lock model (LOCK), and every impossible
 * answer (as `protocol`) in the history, each citing the ids of the
 * operations involved, sorted by rule, then by the first operation cited;
 * and what the lock model left unchecked (its step budget run out). Costs O(n log n) in the number of operations, plus
 * the lock model's search, which is bounded per stretch of overlapping lease
 * calls. Assumes the history holds every call made to its resources
 * (unknown outcomes included) and the final state every result id those
 * writes named.
 */
export function checkHistory(history: History, options: CheckOptions = {}): HistoryCheck {
  const margin = options.clockUncertaintyMs ?? 1;
  const found: Violation[] = [];
  const flag: Flag = (rule, message, operations) =>
    found.push({ rule, message, operations: operations.map((op) => op.id) });

  const calls = callsOf(history.operations);
  const grants = readGrants(calls, flag);
  const sent = writesOf(calls);
  const acked = readAckedWrites(sent, flag);

  const unshared = unsharedPeriods(history.faults);
  checkGrants(grants, unshared, margin, flag);
  const lock = checkLock(grants, history.operations, {
    clockUncertaintyMs: margin,
    exclusive: !options.partial && (options.exclusiveLeases ?? true),
    stepBudget: options.lockStepBudget ?? 100_000,
    coordinatorClock: options.coordinatorClock ?? { maxRate: 1, aheadMs: 0 },
    unsharedPeriods: unshared,
  });
  found.push(...lock.violations);
  const final = options.partial ? undefined : history.final;
  checkFenceOrder(grants, acked, final, margin, flag);
  if (final) checkStored(grants, sent, final, margin, flag);
  // P4: no operation to cite, the sinks' state itself is the evidence.
  for (const line of final?.misplaced ?? []) flag('protocol', `P4: ${line}`, []);
  checkResults(calls, acked, final, margin, flag);
  const first = (v: Violation) => v.operations?.[0] ?? Infinity;
  return {
    violations: found.sort((a, b) => RULE_ORDER.indexOf(a.rule) - RULE_ORDER.indexOf(b.rule) || first(a) - first(b)),
    unchecked: lock.unchecked,
  };
}

/** The ok Acquires and Renews as grants; a lease that cannot answer its request is a protocol violation. */
function readGrants(calls: readonly Call[], flag: Flag): Grant[] {
  const grants: Grant[] = [];
  for (const call of calls) {
    const { op, answer } = call;
    if (!answer || (op.method !== 'Acquire' && op.method !== 'Renew')) continue;
    const { lease } = answer;
    const grant: Grant = {
      op,
      resource: lease.resource,
      token: lease.token,
      holder: lease.holder,
      fresh: op.method === 'Acquire' && !answer.replayed,
    };
    const wrong =
      grant.token === 0n
        ? 'token 0'
        : grant.resource !== call.resource
          ? 'another resource'
          : grant.holder !== call.holder
            ? 'another holder'
            : op.method === 'Renew' && grant.token !== call.token
              ? 'another token'
              : undefined;
    if (wrong) {
      const answered = JSON.stringify(responseOf(op).lease ?? {});
      flag('protocol', `${named(op)} answered a lease with ${wrong}: ${answered}`, [op]);
    } else grants.push(grant);
  }
  return grants;
}

/** The acknowledged Writes; an acknowledgement under a fence other than the write's token breaks F1. */
function readAckedWrites(sent: readonly Call[], flag: Flag): AckedWrite[] {
  const acked: AckedWrite[] = [];
  for (const w of sent) {
    if (!w.answer) continue;
    const { outcome, fence } = w.answer;
    if (outcome !== 'APPLIED' && outcome !== 'REPLAYED') {
      flag('protocol', `${named(w.op)} succeeded with outcome ${JSON.stringify(responseOf(w.op).outcome)}`, [w.op]);
      continue;
    }
    if ((fence ?? 0n) !== w.token) {
      flag('protocol', `${named(w.op)} was ${outcome} under token ${w.token} with fence ${fence ?? ''} (F1)`, [w.op]);
    }
    acked.push({ ...w, replayed: outcome === 'REPLAYED' });
  }
  return acked;
}

/**
 * When the grants of a run did not all go through one coordinator's memory:
 * while the coordinator was down with its data wiped, and restarted with
 * none (crash-wipe), and while a rival coordinator ran (split-brain). A
 * fault still on at the end of the history lasts to its end.
 */
export function unsharedPeriods(faults: readonly FaultPeriod[]): Period[] {
  return faults
    .filter((f) => (f.name === 'crash-wipe' && f.target === 'coordinator') || f.name === 'split-brain')
    .map((f) => ({ startMs: f.startMs, endMs: f.endMs ?? Infinity }));
}

/**
 * S1: one holder per token; S2: one token per request id. (L6, the token
 * order, is the lock model's.) A coordinator keeps request records only in
 * its own memory (R1, R3), so a request id whose Acquires were sent before
 * an unshared period ended and answered after it began may yield another
 * token from the memory that answers then (the wiped one, or the rival):
 * S2 is not judged between two such grants of it, and is between any others.
 */
function checkGrants(grants: readonly Grant[], unshared: readonly Period[], margin: number, flag: Flag): void {
  for (const same of groupBy(grants, (g) => keyOf(g.resource, String(g.token))).values()) {
    const holders = firstOfEach(same, (g) => g.holder);
    if (holders.length > 1) {
      const list = holders.map((g) => `${g.holder} (${named(g.op)})`).join(', ');
      flag('S1', `${same[0]!.resource}: token ${same[0]!.token} was granted to ${list}`, ops(holders));
    }
  }
  const acquires = grants.filter((g) => g.op.method === 'Acquire');
  for (const [requestId, same] of groupBy(acquires, (g) => callOf(g.op).requestId)) {
    const tokens = firstOfEach(same, (g) => keyOf(g.resource, String(g.token)));
    if (tokens.length > 1 && !acrossUnshared(same, unshared, margin)) {
      const list = tokens.map((g) => `token ${g.token} of ${g.resource} (${named(g.op)})`).join(', ');
      flag('S2', `request id ${JSON.stringify(requestId)} yielded ${list}`, ops(tokens));
    }
  }
}

/**
 * Whether every change of token between one grant of a request id and the
 * next (in order of sending) may come from another memory: an unshared
 * period ended after the earlier was sent and began before the later was
 * answered (with the clock uncertainty in their favour).
 */
function acrossUnshared(same: readonly Grant[], unshared: readonly Period[], margin: number): boolean {
  if (unshared.length === 0) return false;
  const bySending = [...same].sort((a, b) => a.op.invokedMs - b.op.invokedMs);
  return bySending.every((later, i) => {
    const earlier = bySending[i - 1];
    if (!earlier || (earlier.resource === later.resource && earlier.token === later.token)) return true;
    return unshared.some((p) => earlier.op.invokedMs <= p.endMs + margin && later.op.completedMs >= p.startMs - margin);
  });
}

/**
 * S3: after a grant of t was acknowledged, no write below t sent later is
 * accepted, and the final fence is at least every acknowledged token. S4:
 * accepted writes follow real time in non-decreasing token order.
 */
function checkFenceOrder(
  grants: readonly Grant[],
  writes: readonly AckedWrite[],
  final: FinalState | undefined,
  margin: number,
  flag: Flag,
): void {
  const grantsOf = groupBy(grants, (g) => g.resource);
  for (const [resource, resourceWrites] of groupBy(writes, (w) => w.resource)) {
    const latestGrant = highestBefore(grantsOf.get(resource) ?? [], (g) => g.op.completedMs);
    const latestWrite = highestBefore(resourceWrites, (w) => w.op.completedMs);
    for (const w of resourceWrites) {
      const grant = latestGrant(w.op.invokedMs - margin);
      if (grant && staleUnder(w.token, grant.token)) {
        flag(
          'S3',
          `${resource}: ${named(w.op)} with token ${w.token} was accepted, though the grant of token ${grant.token} to ${grant.holder} (${named(grant.op)}) was acknowledged before it was sent`,
          [grant.op, w.op],
        );
      }
      const earlier = latestWrite(w.op.invokedMs - margin);
      if (earlier && breaksOrder(w.token, earlier.token)) {
        flag(
          'S4',
          `${resource}: ${named(w.op)} with token ${w.token} was accepted after ${named(earlier.op)} with token ${earlier.token} had been`,
          [earlier.op, w.op],
        );
      }
    }
  }
  if (!final) return;
  // Every acknowledged token was the fence once (L3, F1) and fences only
  // move up (F4), so the final fence is at least the highest of them.
  const acknowledged = [...grants, ...writes];
  for (const [resource, same] of groupBy(acknowledged, (a) => a.resource)) {
    const fence = final.fences[resource];
    const top = same.reduce((a, b) => (b.token > a.token ? b : a));
    if (fence !== undefined && staleUnder(tokenOf(fence), top.token)) {
      flag(
        'S3',
        `${resource}: the final fence ${fence} is below token ${top.token}, acknowledged by ${named(top.op)}`,
        [top.op],
      );
    }
  }
}

/**
 * Where each stored result came from. It must have been sent by a write of
 * its result id that may have succeeded, with its token (S4: else it was
 * stored under a token no write of it carried) and its payload (S6: else it
 * holds a payload nobody sent under that token). S3: if every such write
 * was sent after a grant above its token was acknowledged, the sink
 * accepted a stale write.
 */
function checkStored(
  grants: readonly Grant[],
  sent: readonly Call[],
  final: FinalState,
  margin: number,
  flag: Flag,
): void {
  const possible = groupBy(
    sent.filter((w) => w.op.outcome.type !== 'fail'),
    (w) => keyOf(w.resource, w.resultId),
  );
  const grantsOf = groupBy(grants, (g) => g.resource);
  for (const [resource, results] of Object.entries(final.results)) {
    const latestGrant = highestBefore(grantsOf.get(resource) ?? [], (g) => g.op.completedMs);
    for (const [resultId, stored] of Object.entries(results)) {
      if (!stored) continue;
      const writers = possible.get(keyOf(resource, resultId)) ?? [];
      const token = tokenOf(stored.token);
      const sameToken = writers.filter((w) => w.token === token);
      const origins = sameToken.filter((w) => w.payload === stored.payload);
      if (sameToken.length === 0) {
        const carried = writers.map((w) => `${w.token} (${named(w.op)})`).join(', ') || 'none';
        flag(
          'S4',
          `${where(resource, resultId)}: the sink holds a result under token ${token}, which no write of it that may have succeeded carried; they carried: ${carried}`,
          ops(writers),
        );
      } else if (origins.length === 0) {
        const list = distinctPayloads(sameToken);
        flag(
          'S6',
          `${where(resource, resultId)}: the sink holds ${quoted(stored.payload)} under token ${token}, but the writes under that token sent ${list.map((w) => `${quoted(w.payload)} (${named(w.op)})`).join(', ')}`,
          ops(list),
        );
      } else {
        const earliest = origins.reduce((a, b) => (b.op.invokedMs < a.op.invokedMs ? b : a));
        const grant = latestGrant(earliest.op.invokedMs - margin);
        // An acknowledged origin sent that late is already reported as such.
        if (grant && staleUnder(token, grant.token) && origins.every((w) => w.op.outcome.type !== 'ok')) {
          flag(
            'S3',
            `${where(resource, resultId)}: the sink holds a result under token ${token}, sent only by writes sent after the grant of token ${grant.token} to ${grant.holder} (${named(grant.op)}) was acknowledged: ${origins.map((w) => named(w.op)).join(', ')}`,
            [grant.op, ...ops(origins)],
          );
        }
      }
    }
  }
}

/**
 * S5: every acknowledged write is stored at the end with its payload, under
 * its own token if APPLIED (a stored result never changes) or under one no
 * higher if REPLAYED (the original's, F3); no Read sent after it was
 * acknowledged finds nothing, and nothing a Read found is gone at the end.
 * S6: one result id, one payload: acknowledged writes and successful reads
 * never disagree, nor do reads with the end. Without `final` (a partial
 * check) only what the calls show.
 */
function checkResults(
  calls: readonly Call[],
  writes: readonly AckedWrite[],
  final: FinalState | undefined,
  margin: number,
  flag: Flag,
): void {
  // undefined: not read back at the end (or a partial check), so not judged.
  const storedOf = (resource: string, resultId: string): StoredResult | null | undefined =>
    final?.results[resource]?.[resultId];
  for (const w of writes) {
    const stored = storedOf(w.resource, w.resultId);
    if (stored === undefined) continue;
    const ack = `${named(w.op)} was acknowledged ${w.replayed ? 'REPLAYED' : 'APPLIED'} under token ${w.token} with ${quoted(w.payload)}`;
    const lost = lostWrite(w, stored);
    if (!lost) continue;
    const problem = !stored
      ? 'nothing'
      : lost === 'payload'
        ? quoted(stored.payload)
        : `it under ${w.replayed ? 'the higher ' : ''}token ${stored.token}`;
    flag('S5', `${where(w.resource, w.resultId)}: ${ack}, but the sink now holds ${problem}`, [w.op]);
  }

  const reads = calls.filter((c) => c.op.method === 'Read');
  const firstAcked = new Map<string, AckedWrite>();
  for (const w of writes) {
    const k = keyOf(w.resource, w.resultId);
    const first = firstAcked.get(k);
    if (!first || w.op.completedMs < first.op.completedMs) firstAcked.set(k, w);
  }
  for (const { op, resource, resultId } of reads) {
    if (op.outcome.type !== 'fail' || op.outcome.reason !== 'RESULT_NOT_FOUND') continue;
    const before = firstAcked.get(keyOf(resource, resultId));
    if (before && before.op.completedMs <= op.invokedMs - margin) {
      flag(
        'S5',
        `${where(resource, resultId)}: ${named(op)} found nothing, though ${named(before.op)} had been acknowledged before it was sent`,
        [before.op, op],
      );
    }
  }

  const seen = [
    ...writes,
    ...reads.flatMap(({ op, resource, resultId, answer }) =>
      answer ? [{ op, resource, resultId, payload: answer.payload }] : [],
    ),
  ].sort((a, b) => a.op.id - b.op.id);
  for (const same of groupBy(seen, (s) => keyOf(s.resource, s.resultId)).values()) {
    const { resource, resultId } = same[0]!;
    const key = where(resource, resultId);
    const stored = storedOf(resource, resultId);
    const payloads = distinctPayloads(same);
    // An acknowledged write that differs from the end alone is S5's
    // finding; a read that does is this one's (or S5's if nothing is left).
    const readAgainstEnd =
      stored === undefined ? undefined : same.find((s) => s.op.method === 'Read' && s.payload !== stored?.payload);
    if (readAgainstEnd && stored === null) {
      flag(
        'S5',
        `${key}: ${named(readAgainstEnd.op)} found ${quoted(readAgainstEnd.payload)}, but the sink now holds nothing`,
        [readAgainstEnd.op],
      );
    }
    if (payloads.length > 1 || (readAgainstEnd && stored)) {
      const cited = payloads.length > 1 ? payloads : [readAgainstEnd!];
      const list = cited.map((s) => `${quoted(s.payload)} (${named(s.op)})`).join(', ');
      const end = stored ? `; at the end it holds ${quoted(stored.payload)}` : '';
      flag('S6', `${key}: seen with ${list}${end}`, ops(cited));
    }
  }
}

/**
 * For items with a token, stamped by `atMs`: a function answering, for a
 * time t, the item with the highest token among those stamped at or before
 * t (undefined if none). Sorting once makes n queries cost n log n.
 */
function highestBefore<T extends { readonly token: bigint }>(items: readonly T[], atMs: (item: T) => number) {
  const sorted = [...items].sort((a, b) => atMs(a) - atMs(b));
  const best: T[] = [];
  for (const item of sorted) {
    const previous = best.at(-1);
    best.push(previous && previous.token >= item.token ? previous : item);
  }
  return (t: number): T | undefined => {
    let lo = 0;
    let hi = sorted.length; // first index stamped after t
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (atMs(sorted[mid]!) <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? undefined : best[lo - 1];
  };
}

const ops = (items: readonly { readonly op: Operation }[]) => items.map((item) => item.op);
