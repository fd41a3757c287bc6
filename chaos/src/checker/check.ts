// The checker of a recorded history: PROTOCOL.md's safety invariants S1–S6,
// judged on what callers were told and what the sink holds at the end.
// An operation with an unknown outcome may or may not have happened: it is
// never counted as having happened when that would accuse the system, nor
// as not having happened when that would. Real-time order between
// operations of different processes is trusted only beyond
// `clockUncertaintyMs`, since each process reads the shared clock itself.
import type { FinalState, History, Operation } from './history.js';
import type { Violation } from './round.js';

/** How much the processes' readings of the shared clock may disagree, in ms. */
export interface CheckOptions {
  readonly clockUncertaintyMs?: number;
  /**
   * A run still under way: judge only what the calls themselves show
   * (S1–S4 and impossible answers), not the final state, which is empty.
   */
  readonly partial?: boolean;
}

interface Grant {
  readonly op: Operation;
  readonly resource: string;
  readonly token: bigint;
  readonly holder: string;
}

interface AckedWrite {
  readonly op: Operation;
  readonly resource: string;
  readonly resultId: string;
  readonly token: bigint;
  readonly payload: string;
}

// Requests and responses come from JSON lines: strings, numbers and booleans only where read here.
const text = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'bigint' ? String(value) : '';
const tokenOf = (value: unknown): bigint => BigInt(text(value) || '0');
const holderOf = (request: Readonly<Record<string, unknown>>) =>
  `${text(request.owner_id)}#${text(request.incarnation)}`;

/** Every violation of S1–S6 (and every impossible answer, as `protocol`) in the history; empty when it is safe. */
export function checkHistory(history: History, options: CheckOptions = {}): Violation[] {
  const margin = options.clockUncertaintyMs ?? 1;
  const found: Violation[] = [];
  const flag = (rule: Violation['rule'], message: string, operations: Operation[]) =>
    found.push({ rule, message, operations: operations.map((op) => op.id) });

  const ok = history.operations.filter((op) => op.outcome.type === 'ok');
  const grants: Grant[] = [];
  for (const op of ok.filter((op) => op.method === 'Acquire' || op.method === 'Renew')) {
    const lease = (op.outcome as { response: { lease?: Record<string, unknown> } }).response.lease ?? {};
    const grant = { op, resource: text(lease.resource), token: tokenOf(lease.token), holder: holderOf(lease) };
    if (grant.token === 0n || grant.resource !== text(op.request.resource)) {
      flag('protocol', `${op.method} #${op.id} answered an impossible lease ${JSON.stringify(lease)}`, [op]);
      continue;
    }
    grants.push(grant);
  }
  const writes: AckedWrite[] = ok
    .filter((op) => op.method === 'Write')
    .map((op) => ({
      op,
      resource: text(op.request.resource),
      resultId: text(op.request.result_id),
      token: tokenOf(op.request.token),
      payload: text(op.request.payload),
    }));
  for (const w of writes) {
    const fence = tokenOf((w.op.outcome as { response: Record<string, unknown> }).response.fence);
    if (fence !== w.token) flag('protocol', `Write #${w.op.id} accepted token ${w.token} under fence ${fence}`, [w.op]);
  }

  checkGrants(grants, flag);
  checkFenceOrder(grants, writes, options.partial ? undefined : history.final, margin, flag);
  if (!options.partial) checkResults(history.operations, writes, history.final, flag);
  return found;
}

type Flag = (rule: Violation['rule'], message: string, operations: Operation[]) => void;

/** S1: one holder per token; S2: one token per request id. */
function checkGrants(grants: Grant[], flag: Flag): void {
  const holders = new Map<string, Grant>();
  for (const g of grants) {
    const key = `${g.resource}@${g.token}`;
    const first = holders.get(key);
    if (!first) holders.set(key, g);
    else if (first.holder !== g.holder) {
      flag(
        'S1',
        `${g.resource}: token ${g.token} held by ${first.holder} (${first.op.method} #${first.op.id}) and by ${g.holder} (${g.op.method} #${g.op.id})`,
        [first.op, g.op],
      );
    }
  }
  const byRequest = new Map<string, Grant>();
  for (const g of grants.filter((g) => g.op.method === 'Acquire')) {
    const id = text(g.op.request.request_id);
    const first = byRequest.get(id);
    if (!first) byRequest.set(id, g);
    else if (first.token !== g.token || first.resource !== g.resource) {
      flag('S2', `request id ${id} yielded token ${first.token} (#${first.op.id}) and token ${g.token} (#${g.op.id})`, [
        first.op,
        g.op,
      ]);
    }
  }
}

/**
 * S3: after a grant of t was acknowledged, no write below t invoked later is
 * accepted, and the final fence is at least every acknowledged grant. S4:
 * accepted writes follow real time in non-decreasing token order.
 */
function checkFenceOrder(
  grants: Grant[],
  writes: AckedWrite[],
  final: FinalState | undefined,
  margin: number,
  flag: Flag,
): void {
  for (const [resource, resourceWrites] of groupBy(writes, (w) => w.resource)) {
    const resourceGrants = grants.filter((g) => g.resource === resource && g.op.method === 'Acquire');
    const latestGrant = highestBefore(resourceGrants.map((g) => ({ atMs: g.op.completedMs, token: g.token, item: g })));
    const latestWrite = highestBefore(resourceWrites.map((w) => ({ atMs: w.op.completedMs, token: w.token, item: w })));
    for (const w of resourceWrites) {
      const grant = latestGrant(w.op.invokedMs - margin);
      if (grant && w.token < grant.token) {
        flag(
          'S3',
          `${resource}: write #${w.op.id} with token ${w.token} was accepted though a grant of token ${grant.token} (#${grant.item.op.id}) was acknowledged before it was sent`,
          [grant.item.op, w.op],
        );
      }
      const earlier = latestWrite(w.op.invokedMs - margin);
      if (earlier && w.token < earlier.token) {
        flag(
          'S4',
          `${resource}: write #${w.op.id} with token ${w.token} was accepted after write #${earlier.item.op.id} with token ${earlier.token}`,
          [earlier.item.op, w.op],
        );
      }
    }
  }
  if (!final) return;
  for (const g of grants.filter((g) => g.op.method === 'Acquire')) {
    const fence = tokenOf(final.fences[g.resource]);
    if (fence < g.token) {
      flag(
        'S3',
        `${g.resource}: the final fence ${fence} is below the acknowledged grant of token ${g.token} (#${g.op.id})`,
        [g.op],
      );
    }
  }
}

/**
 * S5: every acknowledged write is stored at the end with its payload. S6:
 * one result id, one payload: no two acknowledged writes or reads disagree,
 * and nothing is stored that no write could have sent.
 */
function checkResults(operations: readonly Operation[], writes: AckedWrite[], final: FinalState, flag: Flag): void {
  const key = (resource: string, resultId: string) => `${resource}/${resultId}`;
  for (const [k, same] of groupBy(writes, (w) => key(w.resource, w.resultId))) {
    const other = same.find((w) => w.payload !== same[0]!.payload);
    if (other)
      flag(
        'S6',
        `${k}: acknowledged with payloads "${same[0]!.payload}" (#${same[0]!.op.id}) and "${other.payload}" (#${other.op.id})`,
        [same[0]!.op, other.op],
      );
  }
  for (const w of writes) {
    const stored = final.results[w.resource]?.[w.resultId];
    if (!stored || stored.payload !== w.payload) {
      flag(
        'S5',
        `${key(w.resource, w.resultId)}: write #${w.op.id} was acknowledged with "${w.payload}", but the sink now holds ${stored ? `"${stored.payload}"` : 'nothing'}`,
        [w.op],
      );
    }
  }
  const acked = new Map(writes.map((w) => [key(w.resource, w.resultId), w]));
  for (const read of operations.filter((op) => op.method === 'Read' && op.outcome.type === 'ok')) {
    const w = acked.get(key(text(read.request.resource), text(read.request.result_id)));
    const payload = text((read.outcome as { response: Record<string, unknown> }).response.payload);
    if (w && payload !== w.payload) {
      flag(
        'S6',
        `${key(w.resource, w.resultId)}: read #${read.id} returned "${payload}", write #${w.op.id} was acknowledged with "${w.payload}"`,
        [w.op, read],
      );
    }
  }
  // What is stored must be what some write (acknowledged or of unknown fate) sent, with that token.
  const possible = new Set(
    operations
      .filter((op) => op.method === 'Write' && op.outcome.type !== 'fail')
      .map(
        (op) =>
          `${key(text(op.request.resource), text(op.request.result_id))}@${text(op.request.token)}=${text(op.request.payload)}`,
      ),
  );
  for (const [resource, results] of Object.entries(final.results)) {
    for (const [resultId, stored] of Object.entries(results)) {
      if (stored && !possible.has(`${key(resource, resultId)}@${stored.token}=${stored.payload}`)) {
        flag(
          'S6',
          `${key(resource, resultId)}: the sink holds "${stored.payload}" under token ${stored.token}, which no write that may have succeeded sent`,
          [],
        );
      }
    }
  }
}

/**
 * For items with a time and a token: a function answering, for a time t,
 * the item with the highest token among those at or before t (undefined if
 * none). Sorting once makes a history of n operations cost n log n.
 */
function highestBefore<T>(items: { atMs: number; token: bigint; item: T }[]) {
  const sorted = [...items].sort((a, b) => a.atMs - b.atMs);
  const best: (typeof sorted)[number][] = [];
  for (const entry of sorted) {
    const previous = best.at(-1);
    best.push(previous && previous.token >= entry.token ? previous : entry);
  }
  return (t: number) => {
    let lo = 0;
    let hi = sorted.length; // first index with atMs > t
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]!.atMs <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? undefined : best[lo - 1];
  };
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
