// toFencerError over every reason the services send: the class, the code
// and whether a retry can help, read from the status details exactly as a
// server encodes them (and from the trailer alone, for a client without
// the googleapis protos).
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { REASON_CODES, type Reason } from '@fencer/common';
import { ERROR_DOMAIN, REASON_KEY, STATUS_DETAILS_KEY, encodeStatusDetails } from '@fencer/proto';
import {
  AuthError,
  FenceConflictError,
  InternalError,
  InvalidRequestError,
  LeaseHeldError,
  LeaseLostError,
  NotLeaderError,
  RequestIdReusedError,
  ResourceExhaustedError,
  ResultConflictError,
  ResultNotFoundError,
  UnavailableError,
  toFencerError,
  type FencerError,
} from './errors.js';

/** A ServiceError as grpc-js hands one to a client, with the details a fencer server attaches. */
function serviceError(code: number, reason: string, metadata: Record<string, string> = {}): grpc.ServiceError {
  const trailers = new grpc.Metadata();
  if (reason) {
    trailers.set(REASON_KEY, reason);
    trailers.set(
      STATUS_DETAILS_KEY,
      encodeStatusDetails({
        code,
        message: `refused: ${reason}`,
        errorInfo: { reason, domain: ERROR_DOMAIN, metadata },
        fieldViolations: [],
      }),
    );
  }
  return Object.assign(new Error(`${code} ${reason}`), { code, details: `refused: ${reason}`, metadata: trailers });
}

type ErrorClass = abstract new (...args: never[]) => FencerError;
const EXPECTED: Record<Reason, [ErrorClass, boolean]> = {
  INVALID_FIELD: [InvalidRequestError, false],
  OWNER_MISMATCH: [AuthError, false],
  LEASE_HELD: [LeaseHeldError, true],
  LEASE_EXPIRED: [LeaseLostError, false],
  NOT_LEASE_HOLDER: [LeaseLostError, false],
  REQUEST_ID_REUSED: [RequestIdReusedError, false],
  SINK_UNAVAILABLE: [UnavailableError, true],
  STORAGE_UNAVAILABLE: [UnavailableError, true], // T3: retried once the service is back
  NOT_LEADER: [NotLeaderError, true], // H7: retried at the leader, same request id
  STALE_TOKEN: [LeaseLostError, false],
  TOKEN_NOT_ISSUED: [LeaseLostError, false],
  RESULT_CONFLICT: [ResultConflictError, false],
  RESULT_NOT_FOUND: [ResultNotFoundError, false],
  FENCE_REGRESSION: [FenceConflictError, false],
  FENCE_CONFLICT: [FenceConflictError, false],
  TOKEN_SPACE_EXHAUSTED: [ResourceExhaustedError, false], // T1: never retried
  RATE_LIMITED: [ResourceExhaustedError, true], // V4: a limit passes
  TOO_MANY_STREAMS: [ResourceExhaustedError, true],
  RECORDS_FULL: [ResourceExhaustedError, true],
  MESSAGE_TOO_LARGE: [ResourceExhaustedError, false], // the same request stays too large
  METADATA_TOO_LARGE: [ResourceExhaustedError, false], // A6: the same metadata stays too large
  MALFORMED_MESSAGE: [InvalidRequestError, false],
  UNAUTHENTICATED: [AuthError, false],
  PERMISSION_DENIED: [AuthError, false],
  INTERNAL: [InternalError, false],
  UNAVAILABLE: [UnavailableError, true],
};

describe('toFencerError', () => {
  it.each(Object.entries(REASON_CODES) as [Reason, number][])(
    '%s becomes its class with its code and retry marker',
    (reason, code) => {
      const [Type, retryable] = EXPECTED[reason];
      const error = toFencerError(serviceError(code, reason));
      expect(error).toBeInstanceOf(Type);
      expect([error.code, error.reason, error.retryable]).toEqual([code, reason, retryable]);
    },
  );

  it('reads the details: the fence of STALE_TOKEN, the holder and remaining time of LEASE_HELD', () => {
    const stale = toFencerError(
      serviceError(REASON_CODES.STALE_TOKEN, 'STALE_TOKEN', { fence: '18446744073709551615' }),
    );
    expect(stale).toBeInstanceOf(LeaseLostError);
    expect((stale as LeaseLostError).fence).toBe(2n ** 64n - 1n);
    const held = toFencerError(
      serviceError(REASON_CODES.LEASE_HELD, 'LEASE_HELD', { holder_owner_id: 'b', remaining_ms: '1234' }),
    );
    expect([(held as LeaseHeldError).holderOwnerId, (held as LeaseHeldError).remainingMs]).toEqual(['b', 1234]);
  });

  it('NOT_LEADER (H2) is an UnavailableError naming the leader, or none when the replica knows none', () => {
    const named = toFencerError(serviceError(REASON_CODES.NOT_LEADER, 'NOT_LEADER', { leader: '10.0.0.7:50051' }));
    expect(named).toBeInstanceOf(UnavailableError);
    expect([named.code, (named as NotLeaderError).leader]).toEqual([grpc.status.UNAVAILABLE, '10.0.0.7:50051']);
    expect((toFencerError(serviceError(REASON_CODES.NOT_LEADER, 'NOT_LEADER')) as NotLeaderError).leader).toBe(
      undefined,
    );
  });

  it.each([
    [grpc.status.UNAVAILABLE, UnavailableError, true],
    [grpc.status.DEADLINE_EXCEEDED, UnavailableError, true],
    [grpc.status.UNAUTHENTICATED, AuthError, false],
    [grpc.status.UNKNOWN, InternalError, false],
  ] as const)('a transport failure without a reason (code %i) is judged by its code', (code, Type, retryable) => {
    const error = toFencerError(serviceError(code, ''));
    expect(error).toBeInstanceOf(Type);
    expect([error.reason, error.retryable]).toEqual(['', retryable]);
  });

  it('anything that is not a gRPC error is an InternalError, and a FencerError passes through', () => {
    const internal = toFencerError(new TypeError('boom'));
    expect(internal).toBeInstanceOf(InternalError);
    expect(toFencerError(internal)).toBe(internal);
  });
});
