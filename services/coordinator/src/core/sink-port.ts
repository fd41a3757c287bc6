// How the coordinator's core reaches the sink (L3 step 2, L6, L8), as
// protocol outcomes rather than transport errors. The core learns the sink's
// fence only from FENCE_REGRESSION (L6), so AdvanceFence is all it needs.

/** AdvanceFence's outcome (F4). */
export type SinkAdvanceOutcome =
  /** The sink's fence is now durably `fence` (== the token asked for). */
  | { readonly kind: 'advanced'; readonly fence: bigint }
  /** FENCE_REGRESSION: the sink's fence `fence` is already >= the token. */
  | { readonly kind: 'regression'; readonly fence: bigint }
  /**
   * No answer we can rely on: down, partitioned, past the deadline, refusing
   * our credential, or any other error. `sinkCode` is the gRPC code name
   * (e.g. UNAVAILABLE, DEADLINE_EXCEEDED, PERMISSION_DENIED). The fence may
   * or may not have moved, so the token is burned.
   */
  | { readonly kind: 'unavailable'; readonly sinkCode: string };

/** One AdvanceFence: move `resource`'s fence to `token`, for the grant attempt `grantId` (F4), bound to `ownerId` (A5). */
export interface FenceAdvance {
  readonly resource: string;
  readonly token: bigint;
  readonly grantId: string;
  /**
   * The holder the token goes to; with auth on, the sink accepts writes
   * under it from this identity only. null binds no one (auth off).
   */
  readonly ownerId: string | null;
}

/** The sink as the coordinator uses it; implementations never throw for remote failures. */
export interface SinkPort {
  /** Asks the sink to make `advance.token` the fence, bound to `advance.ownerId` (F4, A5). Bounded in time. */
  advanceFence(advance: FenceAdvance): Promise<SinkAdvanceOutcome>;
}
