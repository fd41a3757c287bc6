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

/** The sink as the coordinator uses it; implementations never throw for remote failures. */
export interface SinkPort {
  /** Asks the sink to move `resource`'s fence to `token`, identified by `grantId` (F4). Bounded in time. */
  advanceFence(resource: string, token: bigint, grantId: string): Promise<SinkAdvanceOutcome>;
}
