// Protects F1–F4 (and through them S3, S4, S6): a write is accepted only under
// the resource's current fence, the token check comes before the result-id
// check, a stored result never changes, and a fence only ever moves up.

/** A result as stored: the token it was accepted under and its exact bytes. */
export interface StoredResult {
  readonly token: bigint;
  readonly payload: Uint8Array;
}

/** A resource's fence and the grant attempt that set it (for idempotent F4 retries). */
export interface FenceRecord {
  readonly fence: bigint;
  readonly grantId: string;
}

/** What a Write asks for; `token` > 0 (V2, checked before this point). */
export interface WriteAttempt {
  readonly token: bigint;
  readonly payload: Uint8Array;
}

/** What an AdvanceFence asks for; `token` > 0 (V2). */
export interface AdvanceAttempt {
  readonly token: bigint;
  readonly grantId: string;
}

/** The verdict on a Write. Only `apply` changes state. */
export type WriteDecision =
  | { readonly kind: 'apply' }
  | { readonly kind: 'replayed' }
  | { readonly kind: 'stale'; readonly fence: bigint }
  | { readonly kind: 'not-issued'; readonly fence: bigint }
  | { readonly kind: 'conflict' };

/** The verdict on an AdvanceFence. Only `advanced` changes state. */
export type AdvanceDecision =
  | { readonly kind: 'advanced' }
  | { readonly kind: 'retry-same-grant' }
  | { readonly kind: 'regression'; readonly fence: bigint };

/** How a Write is judged against the resource's fence and any stored result (decideWrite's shape). */
export type WritePolicy = (fence: bigint, existing: StoredResult | undefined, attempt: WriteAttempt) => WriteDecision;

/**
 * F1 then F3: the token must equal the fence (0 = never advanced, so any
 * token is not issued); only then does an existing result under the same
 * result_id make the write a replay (same bytes) or a conflict (other bytes).
 */
export function decideWrite(fence: bigint, existing: StoredResult | undefined, attempt: WriteAttempt): WriteDecision {
  // The token check comes first (F3): a stale replay is STALE_TOKEN, so a
  // fenced-out worker learns nothing from Write and must use Read.
  if (attempt.token < fence) return { kind: 'stale', fence };
  if (attempt.token > fence) return { kind: 'not-issued', fence };
  if (existing === undefined) return { kind: 'apply' };
  return sameBytes(existing.payload, attempt.payload) ? { kind: 'replayed' } : { kind: 'conflict' };
}

/**
 * F4: the fence moves only up; the same grant_id re-setting the token it
 * already set is an idempotent retry; anything else is a regression.
 */
export function decideAdvance(current: FenceRecord | undefined, attempt: AdvanceAttempt): AdvanceDecision {
  const fence = current?.fence ?? 0n;
  if (attempt.token > fence) return { kind: 'advanced' };
  if (current !== undefined && attempt.token === fence && attempt.grantId === current.grantId)
    return { kind: 'retry-same-grant' };
  return { kind: 'regression', fence };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
