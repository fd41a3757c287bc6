// The single rule each other variant breaks, as a wrapper around the real
// part: a write policy for the sink's engine, and wrappers of the
// coordinator's sink port and core. Everything else is the real service.
import { randomUUID } from 'node:crypto';
import { decideWrite, type WritePolicy } from '@fencer/sink';
import type { CoordinatorApi, SinkPort } from '@fencer/coordinator';

/**
 * F1 broken: a token above the fence is judged as if it were the fence, so
 * `token >= fence` is accepted (a worker can invent a bigger number). A
 * stale token, and F3 after the token check, are judged as decideWrite does.
 */
export const lenientWrite: WritePolicy = (current, existing, attempt) =>
  attempt.token > (current?.fence ?? 0n)
    ? decideWrite({ grantId: '', ownerId: null, ...current, fence: attempt.token }, existing, attempt)
    : decideWrite(current, existing, attempt);

/**
 * F1 broken the other way: a token below the fence is judged as if it were
 * the fence, so `token <= fence` is accepted and a fenced-out holder's late
 * write lands — the bug the whole protocol exists to prevent. The stale
 * token's owner is not kept (A5 binds only the current fence), so it is
 * judged bound to nobody; else auth would refuse the old holder's write as
 * OWNER_MISMATCH and not every stale write would be accepted. A token above
 * the fence, and F3 after the token check, are judged as decideWrite does.
 */
export const staleAcceptingWrite: WritePolicy = (current, existing, attempt) =>
  current !== undefined && attempt.token < current.fence
    ? decideWrite({ ...current, fence: attempt.token, ownerId: null }, existing, attempt)
    : decideWrite(current, existing, attempt);

/**
 * F3 broken: the result already stored under a result id is not looked at,
 * so a write naming it with another payload is APPLIED and replaces it, and
 * one (resource, result_id) has held two payloads (S6). F1 and A5 are
 * judged as decideWrite does.
 */
export const overwritingWrite: WritePolicy = (current, _existing, attempt) => decideWrite(current, undefined, attempt);

/**
 * L3 broken: every AdvanceFence is reported done at once and only sent to
 * `sink` `delayMs` later, so the coordinator grants a token while the sink
 * still accepts the previous holder's. What the sink answers is ignored;
 * the timer does not keep the process alive.
 */
export function grantFirst(sink: SinkPort, delayMs: number): SinkPort {
  return {
    advanceFence: async (advance) => {
      setTimeout(() => void sink.advanceFence(advance), delayMs).unref();
      return { kind: 'advanced', fence: advance.token };
    },
  };
}

/**
 * R1/R2 broken: each Acquire reaches `core` under a fresh request id, so no
 * retry ever finds its record; a retry after the lease ended mints a second
 * token (S2). The records the core keeps under those ids are never looked
 * up again and are collected after retention (R3).
 */
export function withoutRequestRecords(core: CoordinatorApi): CoordinatorApi {
  return {
    acquire: (params) => core.acquire({ ...params, requestId: randomUUID() }),
    renew: (params) => core.renew(params),
    release: (params) => core.release(params),
    describe: (resource) => core.describe(resource),
    nextToken: (resource) => core.nextToken(resource),
    forceRelease: (resource, token, adminId) => core.forceRelease(resource, token, adminId),
  };
}
