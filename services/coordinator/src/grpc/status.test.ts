// The error model of PROTOCOL.md for every refusal the coordinator's core can
// produce: gRPC code, reason, and exactly the ErrorInfo metadata keys clients
// branch on. The wire path (toStatus) is the kit's and is tested there and end
// to end; this pins what the coordinator hands to it.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { Failure } from '@fencer/server-kit';
import { REASON_CODES } from '@fencer/common';
import type { AcquireOutcome, RenewOutcome } from '../core/coordinator.js';
import type { LeaseView } from '../core/model.js';
import { acquireResponseOrThrow, notLeaderFailure, releaseResponse, renewResponseOrThrow } from './status.js';

const SINK = { name: 'b', address: '10.0.0.2:50051' };

const holder: LeaseView = {
  resource: 'r',
  ownerId: 'alice',
  incarnation: 7n,
  token: 3n,
  ttlMs: 1_000,
  remainingMs: 640,
};

function refusal(answer: () => unknown) {
  try {
    answer();
  } catch (error) {
    expect(error).toBeInstanceOf(Failure);
    const failure = error as Failure;
    return { code: REASON_CODES[failure.reason], reason: failure.reason, metadata: { ...failure.metadata } };
  }
  throw new Error('expected a refusal');
}

describe('error model: outcome → code, reason, ErrorInfo metadata', () => {
  it.each<[string, AcquireOutcome, number, string, Record<string, string>]>([
    [
      'L2',
      { kind: 'held', holder, remainingMs: 641 },
      grpc.status.ABORTED,
      'LEASE_HELD',
      { holder_owner_id: 'alice', holder_incarnation: '7', remaining_ms: '641' },
    ],
    [
      'R2',
      { kind: 'request-id-reused', requestId: 'q-1' },
      grpc.status.INVALID_ARGUMENT,
      'REQUEST_ID_REUSED',
      { request_id: 'q-1' },
    ],
    [
      'L3 step 2',
      { kind: 'sink-unavailable', sinkCode: 'DEADLINE_EXCEEDED' },
      grpc.status.UNAVAILABLE,
      'SINK_UNAVAILABLE',
      { sink_code: 'DEADLINE_EXCEEDED' },
    ],
    [
      'L3 regression twice',
      { kind: 'fence-conflict', fence: 18446744073709551615n },
      grpc.status.ABORTED,
      'FENCE_CONFLICT',
      { fence: '18446744073709551615' },
    ],
    [
      'T1',
      { kind: 'token-space-exhausted' },
      grpc.status.RESOURCE_EXHAUSTED,
      'TOKEN_SPACE_EXHAUSTED',
      { resource: 'r' },
    ],
    [
      'V4 rate',
      { kind: 'rate-limited', retryAfterMs: 250 },
      grpc.status.RESOURCE_EXHAUSTED,
      'RATE_LIMITED',
      { retry_after_ms: '250' },
    ],
    [
      'V4 records',
      { kind: 'records-full', scope: 'owner', limit: 3 },
      grpc.status.RESOURCE_EXHAUSTED,
      'RECORDS_FULL',
      { scope: 'owner', limit: '3' },
    ],
  ])('Acquire, %s', (_rule, outcome, code, reason, metadata) => {
    expect(refusal(() => acquireResponseOrThrow(outcome, 'r', SINK))).toEqual({ code, reason, metadata });
  });

  it.each<[string, RenewOutcome, string]>([
    ['someone else holds the latest grant', { kind: 'not-holder' }, 'NOT_LEASE_HOLDER'],
    ['the lease is over', { kind: 'expired' }, 'LEASE_EXPIRED'],
  ])('Renew when %s: FAILED_PRECONDITION (never a code that invites a retry)', (_when, outcome, reason) => {
    expect(refusal(() => renewResponseOrThrow(outcome, 'r', SINK))).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      reason,
    });
  });

  it.each<[string, string | undefined, Record<string, string>]>([
    ['names the leader when it is known', '10.0.0.2:50052', { leader: '10.0.0.2:50052' }],
    ['names none when no leader is known', undefined, {}],
  ])('H2: NOT_LEADER is UNAVAILABLE (retried elsewhere) and %s', (_what, leader, metadata) => {
    expect(
      refusal(() => {
        throw notLeaderFailure(leader);
      }),
    ).toEqual({ code: grpc.status.UNAVAILABLE, reason: 'NOT_LEADER', metadata });
  });

  it('granted and replayed leases carry uint64 fields as decimal strings and the owning sink (P3); replayed says so', () => {
    const lease = { ...holder, token: 18446744073709551615n };
    const wire = {
      resource: 'r',
      owner_id: 'alice',
      incarnation: '7',
      token: '18446744073709551615',
      ttl_ms: '1000',
      remaining_ms: '640',
      sink: { name: 'b', address: '10.0.0.2:50051' },
    };
    expect(acquireResponseOrThrow({ kind: 'granted', lease }, 'r', SINK)).toEqual({ lease: wire, replayed: false });
    expect(acquireResponseOrThrow({ kind: 'replayed', lease }, 'r', SINK)).toEqual({ lease: wire, replayed: true });
  });

  it('L5: Release is never an error', () => {
    expect(releaseResponse({ kind: 'released' })).toEqual({ released: true });
    expect(releaseResponse({ kind: 'not-released' })).toEqual({ released: false });
  });
});
