// The coordinator's one outcome → response/Failure mapping (PROTOCOL.md error
// model). Details travel as ErrorInfo metadata, numbers as decimal strings,
// so clients branch on code + reason and read e.g. `remaining_ms` or `fence`.
import { Failure } from '@fencer/server-kit';
import type {
  AcquireResponse,
  DescribeResponse,
  ForceReleaseResponse,
  Lease,
  ReleaseResponse,
  RenewResponse,
} from '@fencer/proto';
import type { AcquireOutcome, ForceReleaseOutcome, ReleaseOutcome, RenewOutcome } from '../core/coordinator.js';
import type { Description } from '../core/lease-table.js';
import type { LeaseView } from '../core/model.js';
import type { SinkTarget } from '../core/shards.js';

/** A lease on the wire, naming the sink that owns its resource (P3): uint64 fields as decimal strings. */
export function leaseMessage(lease: LeaseView, sink: SinkTarget): Lease {
  return {
    resource: lease.resource,
    owner_id: lease.ownerId,
    incarnation: lease.incarnation.toString(),
    token: lease.token.toString(),
    ttl_ms: String(lease.ttlMs),
    remaining_ms: String(lease.remainingMs),
    sink: { name: sink.name, address: sink.address },
  };
}

/** granted/replayed → response; LEASE_HELD, REQUEST_ID_REUSED, SINK_UNAVAILABLE, FENCE_CONFLICT, TOKEN_SPACE_EXHAUSTED, RATE_LIMITED, RECORDS_FULL thrown. */
export function acquireResponseOrThrow(outcome: AcquireOutcome, resource: string, sink: SinkTarget): AcquireResponse {
  switch (outcome.kind) {
    case 'granted':
      return { lease: leaseMessage(outcome.lease, sink), replayed: false };
    case 'replayed':
      return { lease: leaseMessage(outcome.lease, sink), replayed: true };
    case 'held':
      throw new Failure(
        'LEASE_HELD',
        `${resource} is leased to ${outcome.holder.ownerId} for ${outcome.remainingMs} ms more`,
        {
          holder_owner_id: outcome.holder.ownerId,
          holder_incarnation: outcome.holder.incarnation.toString(),
          remaining_ms: String(outcome.remainingMs),
        },
      );
    case 'request-id-reused':
      throw new Failure(
        'REQUEST_ID_REUSED',
        'this request_id was already used with different parameters (R2); use a fresh one per acquisition',
        {
          request_id: outcome.requestId,
        },
      );
    case 'sink-unavailable':
      throw new Failure(
        'SINK_UNAVAILABLE',
        `the sink did not confirm the new fence (${outcome.sinkCode}); nothing was granted, retry with the same request_id`,
        {
          sink_code: outcome.sinkCode,
        },
      );
    case 'fence-conflict':
      throw new Failure(
        'FENCE_CONFLICT',
        `the sink's fence of ${resource} (${outcome.fence}) stayed ahead of this coordinator; another coordinator is granting`,
        {
          fence: outcome.fence.toString(),
        },
      );
    case 'token-space-exhausted':
      throw new Failure(
        'TOKEN_SPACE_EXHAUSTED',
        `${resource} has used up its tokens: the next would pass 2^64-1 (T1); it can never be granted again`,
        { resource },
      );
    case 'rate-limited':
      throw new Failure(
        'RATE_LIMITED',
        `this owner's Acquire rate is spent (V4); nothing was done, retry in ${outcome.retryAfterMs} ms`,
        { retry_after_ms: String(outcome.retryAfterMs) },
      );
    case 'records-full':
      throw new Failure(
        'RECORDS_FULL',
        outcome.scope === 'owner'
          ? `this owner keeps ${outcome.limit} request records already (V4, R3); nothing was granted, retry once some are released or collected`
          : `the coordinator keeps ${outcome.limit} request records already (V4, R3); nothing was granted`,
        { scope: outcome.scope, limit: String(outcome.limit) },
      );
  }
}

/** renewed → response; NOT_LEASE_HOLDER, LEASE_EXPIRED thrown (both FAILED_PRECONDITION: do not retry). */
export function renewResponseOrThrow(outcome: RenewOutcome, resource: string, sink: SinkTarget): RenewResponse {
  switch (outcome.kind) {
    case 'renewed':
      return { lease: leaseMessage(outcome.lease, sink) };
    case 'not-holder':
      throw new Failure(
        'NOT_LEASE_HOLDER',
        `the latest grant of ${resource} is not this owner, incarnation and token`,
        { resource },
      );
    case 'expired':
      throw new Failure('LEASE_EXPIRED', `the lease on ${resource} is over and cannot be renewed; acquire again`, {
        resource,
      });
  }
}

/** Never an error (L5). */
export function releaseResponse(outcome: ReleaseOutcome): ReleaseResponse {
  switch (outcome.kind) {
    case 'released':
      return { released: true };
    case 'not-released':
      return { released: false };
  }
}

/** `lease` unset when the resource is free; `last_token` 0 when never granted; `next_token` 0 once none is left (T1). */
export function describeResponse(
  description: Description,
  nextToken: bigint | undefined,
  sink: SinkTarget,
): DescribeResponse {
  return {
    lease: description.lease ? leaseMessage(description.lease, sink) : null,
    last_token: description.lastToken.toString(),
    next_token: (nextToken ?? 0n).toString(),
  };
}

/** forced/unchanged → response; SINK_UNAVAILABLE (retry: the grant is not ended) and TOKEN_SPACE_EXHAUSTED thrown. */
export function forceReleaseResponseOrThrow(outcome: ForceReleaseOutcome, resource: string): ForceReleaseResponse {
  switch (outcome.kind) {
    case 'forced':
      return { forced: true, fence: outcome.fence.toString(), last_token: outcome.lastToken.toString() };
    case 'unchanged':
      return { forced: false, fence: '0', last_token: outcome.lastToken.toString() };
    case 'sink-unavailable':
      throw new Failure(
        'SINK_UNAVAILABLE',
        `the sink did not confirm the new fence (${outcome.sinkCode}); the lease was not ended, retry`,
        { sink_code: outcome.sinkCode },
      );
    case 'token-space-exhausted':
      throw new Failure(
        'TOKEN_SPACE_EXHAUSTED',
        `${resource} has used up its tokens: the next would pass 2^64-1 (T1); it cannot be fenced again`,
        { resource },
      );
  }
}

/**
 * H2: this replica does not lead now (a standby, or a leader past its leader
 * lease or deposed): UNAVAILABLE NOT_LEADER, with `leader`, the leading
 * replica's advertised address, in the details when it is known. The call
 * may have been written before leadership was lost, so clients retry it
 * there with the same request id (H7, R4).
 */
export function notLeaderFailure(leader: string | undefined): Failure {
  return leader === undefined
    ? new Failure(
        'NOT_LEADER',
        'this coordinator replica does not lead now and knows no leader yet; retry shortly (H2)',
      )
    : new Failure('NOT_LEADER', `this coordinator replica does not lead now; the leader is ${leader} (H2)`, { leader });
}
