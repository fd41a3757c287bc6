// The coordinator's domain values. Tokens and incarnations are bigint
// (uint64 on the wire); times are monotonic milliseconds of the injected
// Clock (L1); durations carry their unit in the name.

/** The latest grant of a resource, as stored (L3) and reloaded (L7). */
export interface Grant {
  readonly resource: string;
  readonly ownerId: string;
  /** > 0; distinguishes restarts of one owner. */
  readonly incarnation: bigint;
  /** The fencing token; unique per resource and strictly increasing (L6). */
  readonly token: bigint;
  /** The lease's TTL: the Acquire's, or the last non-zero Renew's (L4); what L7 uses. */
  readonly ttlMs: number;
  /**
   * How the grant ended before anyone took over: released by its holder (L5)
   * or fenced out by the coordinator after expiry (L8). null while it may
   * still be valid. An ended grant is never revived by a restart (L7).
   */
  readonly ended: 'released' | 'fenced' | null;
}

/** An Acquire's identity and parameters, recorded with its grant (R1, R3). */
export interface RequestRecord {
  readonly requestId: string;
  readonly resource: string;
  readonly ownerId: string;
  readonly incarnation: bigint;
  /** The ttl_ms the Acquire asked for (part of R1's "same parameters"). */
  readonly ttlMs: number;
  /** The token this request was granted; the only token it will ever get (S2). */
  readonly token: bigint;
}

/** A lease as answered to clients: `remainingMs` is an integer, 0 once it is over. */
export interface LeaseView {
  readonly resource: string;
  readonly ownerId: string;
  readonly incarnation: bigint;
  readonly token: bigint;
  readonly ttlMs: number;
  readonly remainingMs: number;
}

/** Acquire's validated input (V1/V2 and A3 are checked before it gets here). */
export interface AcquireParams {
  readonly requestId: string;
  readonly resource: string;
  readonly ownerId: string;
  readonly incarnation: bigint;
  readonly ttlMs: number;
}

/** Renew's validated input; `ttlMs` 0 keeps the current TTL (L4). */
export interface RenewParams {
  readonly resource: string;
  readonly ownerId: string;
  readonly incarnation: bigint;
  readonly token: bigint;
  readonly ttlMs: number;
}

/** Release's validated input (L5). */
export interface ReleaseParams {
  readonly resource: string;
  readonly ownerId: string;
  readonly incarnation: bigint;
  readonly token: bigint;
}
