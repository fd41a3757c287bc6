// An in-memory SinkPort that implements F4 faithfully (advance iff token >
// fence, or the same grant_id already set this token for the same owner;
// else FENCE_REGRESSION with the fence). A unit-test double only: process
// tests use the real sink, and memory-sink-contract.test.ts holds it to the
// sink's own fence policy.
import type { FenceAdvance, SinkAdvanceOutcome, SinkPort } from '../../src/core/sink-port.js';

/** F4 over Maps, with switches tests use to make the sink fail or stall. */
export class MemorySink implements SinkPort {
  /** Each resource's fence; tests may set one directly to play another coordinator (split brain). */
  readonly fences = new Map<string, bigint>();
  /** The grant_id and owner that set each resource's current fence (F4's idempotent retry, A5). */
  readonly setBy = new Map<string, { grantId: string; ownerId: string | null }>();
  /** Every AdvanceFence that moved a fence, in order. */
  readonly advances: FenceAdvance[] = [];
  /** Every AdvanceFence received (moved, retried, refused or failed), in order. */
  readonly received: FenceAdvance[] = [];
  /** When set, every AdvanceFence answers unavailable with this gRPC code name. */
  down: string | null = null;
  /** Runs before each AdvanceFence is judged (tests use it to observe or interfere). */
  beforeAdvance: ((resource: string, token: bigint) => void | Promise<void>) | null = null;

  async advanceFence(advance: FenceAdvance): Promise<SinkAdvanceOutcome> {
    const { resource, token, grantId, ownerId } = advance;
    this.received.push(advance);
    if (this.beforeAdvance) await this.beforeAdvance(resource, token);
    if (this.down) return { kind: 'unavailable', sinkCode: this.down };
    const fence = this.fence(resource);
    if (token > fence) {
      this.fences.set(resource, token);
      this.setBy.set(resource, { grantId, ownerId });
      this.advances.push(advance);
      return { kind: 'advanced', fence: token };
    }
    const setBy = this.setBy.get(resource);
    // One grant attempt has one owner: the same grant_id for another owner is no retry (A5).
    if (token === fence && setBy?.grantId === grantId && setBy.ownerId === ownerId) return { kind: 'advanced', fence };
    return { kind: 'regression', fence };
  }

  /** The current fence of `resource` (0n if never advanced). */
  fence(resource: string): bigint {
    return this.fences.get(resource) ?? 0n;
  }

  /** F1 as the sink would judge a Write with `token`. */
  judgeWrite(resource: string, token: bigint): 'accepted' | 'STALE_TOKEN' | 'TOKEN_NOT_ISSUED' {
    const fence = this.fence(resource);
    return token === fence ? 'accepted' : token < fence ? 'STALE_TOKEN' : 'TOKEN_NOT_ISSUED';
  }
}
