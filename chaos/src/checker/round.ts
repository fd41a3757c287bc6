// The history checker's first part: one round of the race this project
// exists to prevent, judged on what was acknowledged and what is stored.
// A round: the fence is at t; writes with token t race an AdvanceFence(t+1);
// once the advance is acknowledged the checker's client reads every racing
// result id, a successor rewrites each with token t+1, late token-t writes
// are sent, and finally everything is read back.
//
// Safety invariants (PROTOCOL.md): S3, no token-t write is accepted after a
// larger fence was acknowledged, and every accepted one is durable by then;
// S4, a token-(t+1) result is never replaced by a token-t one; S5, an
// acknowledged write stays readable with its bytes; S6, one result id holds
// one payload. Each judged with invariants.ts, as checkHistory judges them.
import { distinctPayloads, lostWrite, type AcknowledgedWrite } from './invariants.js';

/** A stored result as read back: its token and payload (decimal string, UTF-8). */
export interface StoredValue {
  readonly token: string;
  readonly payload: string;
}

/** A Write's answer: APPLIED/REPLAYED, or the refusal's reason, with the fence it reported. */
export interface WriteAnswer {
  readonly outcome: string;
  readonly fence: string;
}

/** Everything one round observed. Arrays are indexed by racing write i (result id w-i). */
export interface RoundHistory {
  readonly resource: string;
  /** The fence the round starts at; the advance goes to t+1. */
  readonly t: bigint;
  /** The AdvanceFence(t+1) answer, or its error. */
  readonly advance: { readonly fence: string } | { readonly error: string };
  /** Token-t writes of w-i, racing the advance; payload racingPayload(t, i). */
  readonly racing: readonly WriteAnswer[];
  /** Reads of w-i issued once the advance was acknowledged. */
  readonly readAfterAdvance: readonly (StoredValue | undefined)[];
  /** Token-(t+1) rewrites of w-i, issued after those reads; payload successorPayload(t, i). */
  readonly successor: readonly WriteAnswer[];
  /** Token-t writes of new result ids, issued after the advance was acknowledged. */
  readonly late: readonly WriteAnswer[];
  /** Final reads of w-i after everything settled. */
  readonly final: readonly (StoredValue | undefined)[];
}

/**
 * One broken rule: the invariant's id (`LOCK` for the lock model, `protocol`
 * for a wrong answer) and what happened.
 */
export interface Violation {
  readonly rule: 'S1' | 'S2' | 'S3' | 'S4' | 'S5' | 'S6' | 'LOCK' | 'protocol';
  readonly message: string;
  /** Ids of the recorded operations involved (checkHistory). */
  readonly operations?: readonly number[];
  /** The first violating operation: the one at which no order of the calls fits the lock model (LOCK). */
  readonly first?: number;
}

/**
 * A part of the history the checker could not judge (the lock model's
 * stretch too large for its step budget): neither safe nor unsafe, what
 * Jepsen's checkers call unknown.
 */
export interface Unchecked {
  readonly rule: 'LOCK';
  readonly message: string;
  /** The first operation left unjudged. */
  readonly operations: readonly number[];
}

/** The payload racing write i carries in a round starting at fence t. */
export const racingPayload = (t: bigint, i: number): string => `old:${t}:${i}`;
/** The payload the successor's rewrite of w-i carries. */
export const successorPayload = (t: bigint, i: number): string => `new:${t + 1n}:${i}`;

/** Every rule one round broke; empty when the round is safe. */
export function checkRound(h: RoundHistory): Violation[] {
  const found: Violation[] = [];
  const flag = (rule: Violation['rule'], message: string) => found.push({ rule, message });
  const t = h.t.toString();
  const next = (h.t + 1n).toString();
  const where = (i: number) => `${h.resource} w-${i}`;

  if (!('fence' in h.advance) || h.advance.fence !== next)
    flag('protocol', `${h.resource}: AdvanceFence(${next}) not acknowledged: ${JSON.stringify(h.advance)}`);
  h.late.forEach((late, i) => {
    if (late.outcome !== 'STALE_TOKEN' || late.fence !== next)
      flag('S3', `${h.resource} late-${i}: token ${t} after the advance ack was ${late.outcome}`);
  });
  h.racing.forEach((racing, i) => {
    const successor = h.successor[i];
    const after = h.readAfterAdvance[i];
    const final = h.final[i];
    // What each write would have stored, had the sink acknowledged it APPLIED.
    const racingWrite: AcknowledgedWrite = { token: h.t, payload: racingPayload(h.t, i), replayed: false };
    const successorWrite: AcknowledgedWrite = { token: h.t + 1n, payload: successorPayload(h.t, i), replayed: false };
    if (racing.outcome !== 'APPLIED' && racing.outcome !== 'STALE_TOKEN')
      flag('protocol', `${where(i)}: unexpected racing outcome ${racing.outcome}`);
    if (racing.outcome === 'STALE_TOKEN' && racing.fence !== next)
      flag('protocol', `${where(i)}: STALE_TOKEN with fence ${racing.fence}, expected ${next}`);
    // S3: an accepted token-t write was accepted before the advance, so it
    // is durable and visible once the advance is acknowledged...
    if (racing.outcome === 'APPLIED' && lostWrite(racingWrite, after)) {
      flag(
        'S3',
        `${where(i)}: APPLIED under ${t} but not stored when the advance to ${next} was acknowledged (read ${JSON.stringify(after)})`,
      );
    }
    // ...and nothing stored under t lacks an APPLIED answer.
    if ((after?.token === t || final?.token === t) && racing.outcome !== 'APPLIED')
      flag('S3', `${where(i)}: stored under ${t} without an APPLIED answer`);
    if (successor === undefined) {
      flag('protocol', `${where(i)}: no successor write was recorded`);
      return;
    }
    // S6: one result_id, one payload.
    const bothApplied = racing.outcome === 'APPLIED' && successor.outcome === 'APPLIED';
    if (bothApplied && distinctPayloads([racingWrite, successorWrite]).length > 1)
      flag('S6', `${where(i)}: both the token-${t} and the token-${next} write were APPLIED`);
    if (successor.outcome !== (racing.outcome === 'APPLIED' ? 'RESULT_CONFLICT' : 'APPLIED')) {
      flag('protocol', `${where(i)}: successor write was ${successor.outcome} after a racing ${racing.outcome}`);
    }
    // S4/S5: an accepted token-(t+1) write is never replaced by a token-t
    // one, and every APPLIED write stays readable with its payload.
    if (successor.outcome === 'APPLIED' && lostWrite(successorWrite, final)) {
      flag('S4', `${where(i)}: the APPLIED token-${next} write was replaced; stored now ${JSON.stringify(final)}`);
    }
    if (racing.outcome === 'APPLIED' && successor.outcome !== 'APPLIED' && lostWrite(racingWrite, final)) {
      flag('S5', `${where(i)}: APPLIED under ${t} but finally stored ${JSON.stringify(final)}`);
    }
  });
  return found;
}
