// The single rule each other variant breaks, as a wrapper around the real
// part: a write policy for the sink's engine, a wrapper of its store, server
// interceptors of the sink's, and wrappers of the coordinator's sink port,
// core, store and lease rules.
// Everything else is the real service.
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { UINT64_MAX } from '@fencer/common';
import { packageDefinition } from '@fencer/proto';
import { decideWrite, type ResultSummary, type SinkStore, type StoredResult, type WritePolicy } from '@fencer/sink';
import type { CoordinatorApi, LeaseRules, LeaseStore, SinkPort } from '@fencer/coordinator';

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
 * A5 broken: the caller's identity is dropped before the write is judged,
 * as if auth were off, so a write under the fence's token is accepted from
 * any worker, never OWNER_MISMATCH. F1 and F3 are judged as decideWrite does.
 */
export const ownerlessWrite: WritePolicy = (current, existing, attempt) =>
  decideWrite(current, existing, { ...attempt, writer: null });

/**
 * The error model broken: every status but OK leaves with its code and
 * message only, so no refusal carries google.rpc.ErrorInfo
 * (grpc-status-details-bin) or the `fencing-reason` trailer, the only
 * trailing metadata the sink sends. As a server interceptor outside the
 * call gate, it strips the gate's refusals too. WriteStream's in-message
 * refusals (this project's extension) keep their details.
 */
export const bareStatuses: grpc.ServerInterceptor = (_method, call) =>
  new grpc.ServerInterceptingCall(call, {
    sendStatus: (status, next) =>
      next(status.code === grpc.status.OK ? status : { code: status.code, details: status.details }),
  });

/**
 * V3 broken: each request's bytes are read as proto-loader's decoder reads
 * them, which takes a field that declares more bytes than follow, and
 * passed on re-encoded, so the sink's own strict check sees only a valid
 * encoding of whatever was half-read. Bytes that decoder refuses pass on
 * as they came. As a server interceptor outside the call gate, it sees the
 * request bytes before the gate decodes them. Other services pass untouched.
 */
export const lenientDecoding: grpc.ServerInterceptor = (method, call) => {
  const [, service, name] = method.path.split('/') as [string, string, string];
  const codec = (packageDefinition[service] as unknown as grpc.ServiceDefinition | undefined)?.[name];
  if (codec === undefined) return new grpc.ServerInterceptingCall(call); // health, reflection: not fencing.v1
  return new grpc.ServerInterceptingCall(call, {
    start: (next) =>
      next({
        onReceiveMessage: (bytes: Buffer, pass) => {
          try {
            pass(codec.requestSerialize(codec.requestDeserialize(bytes)));
          } catch {
            pass(bytes);
          }
        },
      }),
  });
};

/**
 * F6 broken: results live in this process's memory and never reach the
 * store (fences still do), so every acknowledged write is gone after a
 * restart. Until then the sink answers as the real one: Write (F1, F3),
 * Read and ListResults see the results it holds.
 */
export function memoryResults(store: SinkStore): SinkStore {
  const results = new Map<string, Map<string, StoredResult>>(); // resource → result_id → result
  const resultOf = async (resource: string, resultId: string) => results.get(resource)?.get(resultId);
  return {
    fence: (resource) => store.fence(resource),
    durableFence: (resource) => store.durableFence(resource),
    result: resultOf,
    durableResult: resultOf,
    async durableResults(resource, limit) {
      const held = [...(results.get(resource) ?? new Map<string, StoredResult>())];
      held.sort(([idA, a], [idB, b]) => (a.token === b.token ? idA.localeCompare(idB) : a.token > b.token ? -1 : 1));
      return held
        .slice(0, limit)
        .map(([resultId, { token, payload }]): ResultSummary => ({ resultId, token, sizeBytes: payload.length }));
    },
    commit(ops) {
      for (const op of ops) {
        if (op.kind !== 'result') continue;
        if (!results.has(op.resource)) results.set(op.resource, new Map());
        results.get(op.resource)!.set(op.resultId, op.result);
      }
      const fences = ops.filter((op) => op.kind === 'fence');
      return fences.length === 0 ? store.settled().then(() => undefined) : store.commit(fences);
    },
    settled: () => store.settled(),
    whenFailed: () => store.whenFailed(),
    close: () => store.close(),
  };
}

/**
 * `store`, but what it loads at start (and a grant loaded back into memory,
 * V4) leaves out its request records or its grants. It still writes both.
 */
function forgetting(store: LeaseStore, forgotten: 'requests' | 'grants'): LeaseStore {
  const load: LeaseStore['load'] = async () => ({ ...(await store.load()), [forgotten]: [] });
  const loadResource: LeaseStore['loadResource'] = async (resource) => {
    const stored = await store.loadResource(resource);
    return forgotten === 'grants' && stored ? { ...stored, grant: null } : stored;
  };
  // A Proxy, not a spread: the store's methods live on its class and use its private fields.
  return new Proxy(store, {
    get(target, key) {
      if (key === 'load') return load;
      if (key === 'loadResource') return loadResource;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * R3 broken: request records are stored with their grants but not loaded
 * back at start, so a request retried across a coordinator restart is
 * taken for a new one. Everything else a restart restores is the real store's.
 */
export const forgettingRequests = (store: LeaseStore): LeaseStore => forgetting(store, 'requests');

/**
 * L7 broken: the grants in force are not loaded back at start (the token
 * counters are, so L6 holds), so after a restart a lease its holder still
 * has is granted to another owner.
 */
export const forgettingGrants = (store: LeaseStore): LeaseStore => forgetting(store, 'grants');

/**
 * L4 broken: a Renew checks that the grant is the holder's latest and was
 * not released or fenced, but not whether it expired, so an expired lease
 * that nobody took over is revived for a new TTL instead of LEASE_EXPIRED.
 * Everything else (Describe, L2 for other owners, T1) judges expiry as the
 * real core does.
 */
export function revivingRenewals(rules: LeaseRules): LeaseRules {
  return { ...rules, renewable: (grant) => grant.ended === null };
}

/**
 * T1 broken: where the real rule has no token left, the next token is kept
 * at 2^64−1 instead of refused. So once a resource's fence is 2^64−1, an
 * Acquire reserves 2^64−1 again and sends it to the sink, whose F4 refuses
 * it (FENCE_REGRESSION), and L3's retry ends ABORTED FENCE_CONFLICT: a code
 * clients retry, for a resource no retry can ever grant. Below the maximum,
 * tokens are the real rule's.
 */
export function saturatingTokens(rules: LeaseRules): LeaseRules {
  return { ...rules, tokenAfter: (floor) => rules.tokenAfter(floor) ?? UINT64_MAX };
}

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
