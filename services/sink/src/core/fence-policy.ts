// Protects F1–F4 and A5 (and through them S3, S4, S6): a write is accepted
// only under the resource's current fence and, with auth on, only from the
// owner that fence was granted to; the token check comes first, then the
// owner, then the result id; a stored result never changes, and a fence only
// ever moves up.

/** A result as stored: the token it was accepted under and its exact bytes. */
export interface StoredResult {
  readonly token: bigint;
  readonly payload: Uint8Array;
}

/**
 * A resource's fence, the grant attempt that set it (for idempotent F4
 * retries) and the owner it was granted to (A5); `ownerId` null binds no
 * identity (an AdvanceFence without owner_id, or a fence stored before A5).
 */
export interface FenceRecord {
  readonly fence: bigint;
  readonly grantId: string;
  readonly ownerId: string | null;
}

/**
 * What a Write asks for; `token` > 0 (V2, checked before this point).
 * `writer` is the caller's authenticated identity, null when auth is off
 * (then no owner is checked, A5).
 */
export interface WriteAttempt {
  readonly token: bigint;
  readonly payload: Uint8Array;
  readonly writer: string | null;
}

/** What an AdvanceFence asks for; `token` > 0 (V2); `ownerId` null binds no identity (A5). */
export interface AdvanceAttempt {
  readonly token: bigint;
  readonly grantId: string;
  readonly ownerId: string | null;
}

/** The verdict on a Write. Only `apply` changes state. */
export type WriteDecision =
  | { readonly kind: 'apply' }
  | { readonly kind: 'replayed' }
  | { readonly kind: 'stale'; readonly fence: bigint }
  | { readonly kind: 'not-issued'; readonly fence: bigint }
  | { readonly kind: 'owner-mismatch'; readonly fence: bigint }
  | { readonly kind: 'conflict' };

/** The verdict on an AdvanceFence. Only `advanced` changes state. */
export type AdvanceDecision =
  | { readonly kind: 'advanced' }
  | { readonly kind: 'retry-same-grant' }
  | { readonly kind: 'regression'; readonly fence: bigint };

/** How a Write is judged against the resource's fence and any stored result (decideWrite's shape). */
export type WritePolicy = (
  current: FenceRecord | undefined,
  existing: StoredResult | undefined,
  attempt: WriteAttempt,
) => WriteDecision;

/**
 * F1, then A5, then F3: the token must equal the fence (no fence = 0 = never
 * advanced, so any token is not issued); then a writer known to auth must be
 * the owner the fence is bound to, if it is bound; only then does an existing
 * result under the same result_id make the write a replay (same bytes) or a
 * conflict (other bytes).
 */
export function decideWrite(
  current: FenceRecord | undefined,
  existing: StoredResult | undefined,
  attempt: WriteAttempt,
): WriteDecision {
  const fence = current?.fence ?? 0n;
  // The token check comes first (F3): a stale replay is STALE_TOKEN, so a
  // fenced-out worker learns nothing from Write and must use Read.
  if (attempt.token < fence) return { kind: 'stale', fence };
  if (attempt.token > fence) return { kind: 'not-issued', fence };
  // A5: a token is a number anyone may learn (GetFence, error details), not
  // a capability. Before F3, so another identity learns nothing about the
  // owner's results either.
  const owner = current?.ownerId ?? null;
  if (attempt.writer !== null && owner !== null && attempt.writer !== owner) return { kind: 'owner-mismatch', fence };
  if (existing === undefined) return { kind: 'apply' };
  return sameBytes(existing.payload, attempt.payload) ? { kind: 'replayed' } : { kind: 'conflict' };
}

/**
 * F4: the fence moves only up; the same grant_id re-setting the token it
 * already set, for the same owner, is an idempotent retry; anything else is
 * a regression.
 */
export function decideAdvance(current: FenceRecord | undefined, attempt: AdvanceAttempt): AdvanceDecision {
  const fence = current?.fence ?? 0n;
  if (attempt.token > fence) return { kind: 'advanced' };
  // One grant attempt has one owner: a grant_id replayed for another owner
  // is not a retry, and must not be a way to rebind the fence (A5).
  if (
    current !== undefined &&
    attempt.token === fence &&
    attempt.grantId === current.grantId &&
    attempt.ownerId === current.ownerId
  )
    return { kind: 'retry-same-grant' };
  return { kind: 'regression', fence };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
