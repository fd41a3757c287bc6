// The safety invariants S3–S6 of PROTOCOL.md, encoded once: checkRound
// judges one round's definite answers with them, checkHistory a recorded
// history's, each deciding which writes and stored results to compare.
import { firstOfEach, tokenOf } from './fields.js';

/**
 * S3: whether a write under `token` is stale once a grant (or fence) of
 * `acknowledged` has been acknowledged, so the sink must refuse it; and
 * whether a fence at `token` is below an acknowledged token, so it would
 * accept such writes.
 */
export const staleUnder = (token: bigint, acknowledged: bigint): boolean => token < acknowledged;

/** S4: whether a write under `token` accepted after one under `earlier` breaks the non-decreasing token order. */
export const breaksOrder = (token: bigint, earlier: bigint): boolean => token < earlier;

/** An acknowledged write, as S5 compares it with what the sink holds. */
export interface AcknowledgedWrite {
  readonly token: bigint;
  readonly payload: string;
  /** Acknowledged REPLAYED: the original's token is stored, which may be lower (F3). */
  readonly replayed: boolean;
}

/**
 * S5: how what the sink holds for an acknowledged write's result id
 * (`stored`, a decimal token and UTF-8 payload; null or undefined when
 * nothing) falls short of it: `nothing` stored, another `payload`, or a
 * `token` other than its own (APPLIED) or above it (REPLAYED). Undefined
 * when the sink holds the write.
 */
export function lostWrite(
  write: AcknowledgedWrite,
  stored: { readonly token: string; readonly payload: string } | null | undefined,
): 'nothing' | 'payload' | 'token' | undefined {
  if (!stored) return 'nothing';
  if (stored.payload !== write.payload) return 'payload';
  const token = tokenOf(stored.token);
  return (write.replayed ? token > write.token : token !== write.token) ? 'token' : undefined;
}

/**
 * S6: the first item (in the given order) of each payload seen for one
 * result id; more than one breaks "one result id, one payload".
 */
export const distinctPayloads = <T extends { readonly payload: string }>(items: readonly T[]): T[] =>
  firstOfEach(items, (item) => item.payload);
