// How many operations of a history could have broken each safety invariant
// (PROTOCOL.md S1–S6) had the system been wrong: a clean verdict on a
// history that never wrote under a stale token says nothing about S3, so a
// run shows these counts beside its verdict. A pure function of the
// operations, judged with the checker's rules of evidence: an operation
// sent within the clock margin of another is not known to follow it.
import { groupBy } from './fields.js';
import type { Operation } from './history.js';
import { callsOf, writesOf, type Call } from './records.js';

/** Each invariant's count of operations that could have broken it. */
export type Opportunities = Readonly<Record<'S1' | 'S2' | 'S3' | 'S4' | 'S5' | 'S6', number>>;

/** What each count counts, for a run's summary. */
export const OPPORTUNITY_MEANINGS: Readonly<Record<keyof Opportunities, string>> = Object.freeze({
  S1: 'acquisitions acknowledged',
  S2: 'acquisitions retried under a request id already sent',
  S3: 'writes the sink answered, sent after a grant of a higher token was acknowledged',
  S4: 'writes the sink answered, sent after a write of a higher token was acknowledged, or for a result id already sent under another token',
  S5: 'writes acknowledged',
  S6: 'writes the sink answered for a result id already sent with another payload',
});

/** Something acknowledged under a token: a grant (ok Acquire or Renew) or an accepted write. */
interface Acknowledged {
  readonly op: Operation;
  readonly resource: string;
  readonly token: bigint;
}

/**
 * The operations that could have broken each invariant. S1: every
 * acknowledged Acquire claims a token a second holder might also have
 * been given. S2: every Acquire whose request id an earlier one carried
 * could have minted a second token. S3, S4, S6 count only writes the sink
 * answered (acknowledged or refused), since one whose fate is unknown may
 * never have arrived: S3, those with a token below a grant acknowledged
 * before they were sent; S4, those below a write acknowledged before they
 * were sent, or naming a result id an earlier write sent under another
 * token (the sink could store it under the wrong one); S6, those naming a
 * result id an earlier write sent with another payload. S5: every
 * acknowledged write could be lost. `clockUncertaintyMs` (default 1, as
 * the checker's) is how far apart in time two calls must be to be ordered.
 * O(n log n) in the number of operations.
 */
export function opportunities(
  operations: readonly Operation[],
  options: { readonly clockUncertaintyMs?: number } = {},
): Opportunities {
  const margin = options.clockUncertaintyMs ?? 1;
  const bySending = callsOf([...operations].sort((a, b) => a.invokedMs - b.invokedMs));
  const ok = (op: Operation) => op.outcome.type === 'ok';
  const answered = (op: Operation) => op.outcome.type !== 'unknown';

  const acquires = bySending.filter((c) => c.op.method === 'Acquire');
  const requestIds = new Set<string>();
  let retried = 0;
  for (const { requestId } of acquires) {
    if (requestIds.has(requestId)) retried++;
    requestIds.add(requestId);
  }

  const grants: Acknowledged[] = bySending.flatMap(({ op, resource, answer }) =>
    answer && (op.method === 'Acquire' || op.method === 'Renew') ? [{ op, resource, token: answer.lease.token }] : [],
  );
  const writes = writesOf(bySending);
  const judged = writes.filter((w) => answered(w.op));

  // Per result id, a sweep through its writes in the order they were sent,
  // counting the tokens and payloads of those sent before each (by more
  // than the margin): another one exists if not all of them are its own.
  const otherToken = new Set<Operation>();
  const otherPayload = new Set<Operation>();
  for (const same of groupBy(writes, (w) => `${w.resource}\u0000${w.resultId}`).values()) {
    const tokens = new Map<bigint, number>();
    const payloads = new Map<string, number>();
    let earlier = 0;
    for (const w of same) {
      for (; earlier < same.length && same[earlier]!.op.invokedMs < w.op.invokedMs - margin; earlier++) {
        const e = same[earlier]!;
        tokens.set(e.token, (tokens.get(e.token) ?? 0) + 1);
        payloads.set(e.payload, (payloads.get(e.payload) ?? 0) + 1);
      }
      if (!answered(w.op)) continue;
      if (earlier > (tokens.get(w.token) ?? 0)) otherToken.add(w.op);
      if (earlier > (payloads.get(w.payload) ?? 0)) otherPayload.add(w.op);
    }
  }
  const belowWrite = sentBelow(
    writes.filter((w) => ok(w.op)),
    judged,
    margin,
  );

  return {
    S1: acquires.filter((c) => ok(c.op)).length,
    S2: retried,
    S3: sentBelow(grants, judged, margin).size,
    S4: judged.filter((w) => belowWrite.has(w.op) || otherToken.has(w.op)).length,
    S5: writes.filter((w) => ok(w.op)).length,
    S6: otherPayload.size,
  };
}

/**
 * The writes of `writes` sent more than `margin` after something of their
 * resource with a higher token was acknowledged: one sweep per resource
 * through the acknowledgements by completion and the writes by sending.
 */
function sentBelow(acknowledged: readonly Acknowledged[], writes: readonly Call[], margin: number): Set<Operation> {
  const below = new Set<Operation>();
  const acknowledgedOf = groupBy(acknowledged, (a) => a.resource);
  for (const [resource, same] of groupBy(writes, (w) => w.resource)) {
    const acks = [...(acknowledgedOf.get(resource) ?? [])].sort((a, b) => a.op.completedMs - b.op.completedMs);
    let next = 0;
    let highest = 0n;
    for (const w of same) {
      for (; next < acks.length && acks[next]!.op.completedMs <= w.op.invokedMs - margin; next++)
        if (acks[next]!.token > highest) highest = acks[next]!.token;
      if (w.token < highest) below.add(w.op);
    }
  }
  return below;
}
