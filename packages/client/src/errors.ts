// Typed errors for workers: every refusal of PROTOCOL.md's error model (and
// every transport failure) becomes one class, carrying the gRPC code, the
// reason, the ErrorInfo details and the field violations, and saying
// whether retrying the same request can help. Nobody parses a message.
import * as grpc from '@grpc/grpc-js';
import type { Reason } from '@fencer/common';
import { remoteFailure, type FieldViolation, type RemoteFailure } from '@fencer/proto';

/** Any failure of a fencer call. `retryable`: the same request (same request id or result id) may succeed later. */
export class FencerError extends Error {
  override name = 'FencerError';
  /** The gRPC status code. */
  readonly code: grpc.status;
  /** The protocol reason (ErrorInfo.reason), or '' for a transport failure without one. */
  readonly reason: string;
  /** ErrorInfo metadata, e.g. `fence`, `remaining_ms`, `sink_code` (decimal strings). */
  readonly details: Readonly<Record<string, string>>;
  /** BadRequest field violations (INVALID_FIELD). */
  readonly fieldViolations: readonly FieldViolation[];
  readonly retryable: boolean;

  constructor(failure: RemoteFailure, retryable: boolean) {
    super(
      failure.message || `${grpc.status[failure.code] ?? failure.code}${failure.reason ? ` ${failure.reason}` : ''}`,
    );
    this.code = failure.code;
    this.reason = failure.reason;
    this.details = Object.freeze({ ...failure.metadata });
    this.fieldViolations = Object.freeze([...failure.fieldViolations]);
    this.retryable = retryable;
  }
}

/**
 * The lease is gone: the sink has a newer fence (STALE_TOKEN), the token was
 * never issued (TOKEN_NOT_ISSUED), or the coordinator no longer counts this
 * holder (NOT_LEASE_HOLDER, LEASE_EXPIRED). Never retryable: stop working
 * on the resource, and acquire again if the work should go on.
 */
export class LeaseLostError extends FencerError {
  override name = 'LeaseLostError';
  /** The sink's fence when it refused, for STALE_TOKEN and TOKEN_NOT_ISSUED. */
  readonly fence: bigint | undefined;
  constructor(failure: RemoteFailure) {
    super(failure, false);
    this.fence = optionalBigint(failure.metadata.fence);
  }

  /**
   * A loss the worker's own library decided, with no refusal from a server:
   * the local deadline passed (LOCAL_DEADLINE_PASSED), the lease was
   * released (RELEASED), or a replayed grant had already ended (GRANT_ENDED).
   * These reasons never travel on the wire.
   */
  static local(reason: LocalLossReason, message: string): LeaseLostError {
    return new LeaseLostError({
      code: grpc.status.FAILED_PRECONDITION,
      reason,
      metadata: {},
      fieldViolations: [],
      message,
    });
  }
}

/** Why a lease keeper gave a lease up without a server's refusal (see LeaseLostError.local). */
export type LocalLossReason = 'LOCAL_DEADLINE_PASSED' | 'RELEASED' | 'GRANT_ENDED';

/** LEASE_HELD: someone else holds the lease for `remainingMs` more (L2). Retry after that, with a fresh request id only if the parameters change. */
export class LeaseHeldError extends FencerError {
  override name = 'LeaseHeldError';
  readonly holderOwnerId: string | undefined;
  /** How long the holder's lease runs on, in ms, as the coordinator saw it. */
  readonly remainingMs: number | undefined;
  constructor(failure: RemoteFailure) {
    super(failure, true);
    this.holderOwnerId = failure.metadata.holder_owner_id;
    this.remainingMs = failure.metadata.remaining_ms === undefined ? undefined : Number(failure.metadata.remaining_ms);
  }
}

/** RESULT_CONFLICT: a different payload is already stored under this result id (F3). */
export class ResultConflictError extends FencerError {
  override name = 'ResultConflictError';
}

/** RESULT_NOT_FOUND: nothing is stored under this resource and result id. */
export class ResultNotFoundError extends FencerError {
  override name = 'ResultNotFoundError';
}

/**
 * The call may or may not have happened: the service or the link is down,
 * the deadline passed, or the coordinator could not reach the sink
 * (SINK_UNAVAILABLE, `sink_code` in the details). Retry with the same
 * request id or result id (R1, F3 make that safe).
 */
export class UnavailableError extends FencerError {
  override name = 'UnavailableError';
}

/**
 * NOT_LEADER (H2): the coordinator replica asked does not lead now. `leader`
 * is the leader's advertised HOST:PORT when the replica knows it. A
 * CoordinatorConnection given several addresses follows it by itself (H7);
 * like any UnavailableError the call may have happened, so retry it with the
 * same request id (R1, R4).
 */
export class NotLeaderError extends UnavailableError {
  override name = 'NotLeaderError';
  /** The leader's address from the details, or undefined when the replica named none. */
  readonly leader: string | undefined;
  constructor(failure: RemoteFailure) {
    super(failure, true);
    this.leader = failure.metadata.leader || undefined;
  }
}

/** INVALID_FIELD or MALFORMED_MESSAGE: the request itself is wrong; `fieldViolations` names the fields. */
export class InvalidRequestError extends FencerError {
  override name = 'InvalidRequestError';
}

/** REQUEST_ID_REUSED: this request id was used with other parameters (R2); use a fresh one per acquisition. */
export class RequestIdReusedError extends FencerError {
  override name = 'RequestIdReusedError';
}

/** FENCE_CONFLICT or FENCE_REGRESSION: the sink's fence is ahead of this coordinator (another one is granting). An operator's problem, not the worker's. */
export class FenceConflictError extends FencerError {
  override name = 'FenceConflictError';
}

/** UNAUTHENTICATED, PERMISSION_DENIED, OWNER_MISMATCH: fix the credentials or the owner id; retrying cannot help. */
export class AuthError extends FencerError {
  override name = 'AuthError';
}

/**
 * A limit (V4, T1): RATE_LIMITED, TOO_MANY_STREAMS and RECORDS_FULL pass;
 * TOKEN_SPACE_EXHAUSTED, MESSAGE_TOO_LARGE and METADATA_TOO_LARGE (the same
 * request stays too large) never do.
 */
export class ResourceExhaustedError extends FencerError {
  override name = 'ResourceExhaustedError';
}

/** INTERNAL, or anything this library does not know: a bug on some side. */
export class InternalError extends FencerError {
  override name = 'InternalError';
}

const lost = (f: RemoteFailure) => new LeaseLostError(f);
const as =
  (Type: new (f: RemoteFailure, retryable: boolean) => FencerError, retryable: boolean) => (f: RemoteFailure) =>
    new Type(f, retryable);

/** Every reason the services send today; the Record type makes a new one a compile error until it is mapped here. */
const BY_REASON: Record<Reason, (failure: RemoteFailure) => FencerError> = {
  INVALID_FIELD: as(InvalidRequestError, false),
  OWNER_MISMATCH: as(AuthError, false),
  LEASE_HELD: (f) => new LeaseHeldError(f),
  LEASE_EXPIRED: lost,
  NOT_LEASE_HOLDER: lost,
  REQUEST_ID_REUSED: as(RequestIdReusedError, false),
  SINK_UNAVAILABLE: as(UnavailableError, true),
  // T3: the service stopped on a failed write; a retry (same request or result id) meets it restarted.
  STORAGE_UNAVAILABLE: as(UnavailableError, true),
  NOT_LEADER: (f) => new NotLeaderError(f),
  STALE_TOKEN: lost,
  TOKEN_NOT_ISSUED: lost,
  RESULT_CONFLICT: as(ResultConflictError, false),
  RESULT_NOT_FOUND: as(ResultNotFoundError, false),
  FENCE_REGRESSION: as(FenceConflictError, false),
  FENCE_CONFLICT: as(FenceConflictError, false),
  TOKEN_SPACE_EXHAUSTED: as(ResourceExhaustedError, false),
  RATE_LIMITED: as(ResourceExhaustedError, true),
  TOO_MANY_STREAMS: as(ResourceExhaustedError, true),
  RECORDS_FULL: as(ResourceExhaustedError, true),
  MESSAGE_TOO_LARGE: as(ResourceExhaustedError, false),
  METADATA_TOO_LARGE: as(ResourceExhaustedError, false),
  MALFORMED_MESSAGE: as(InvalidRequestError, false),
  UNAUTHENTICATED: as(AuthError, false),
  PERMISSION_DENIED: as(AuthError, false),
  INTERNAL: as(InternalError, false),
  UNAVAILABLE: as(UnavailableError, true),
};

/** Codes that, without a reason, mean the call may not have arrived or been answered. */
const TRANSIENT_CODES = new Set<grpc.status>([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);

/**
 * The typed error for anything a fencer call rejected with: a grpc-js
 * ServiceError is read by code, reason and details (never by message); a
 * FencerError is returned as it is; anything else is an InternalError.
 */
export function toFencerError(error: unknown): FencerError {
  if (error instanceof FencerError) return error;
  if (!isServiceError(error)) {
    return new InternalError(
      { code: grpc.status.INTERNAL, reason: '', metadata: {}, fieldViolations: [], message: String(error) },
      false,
    );
  }
  return typedError(remoteFailure(error));
}

/**
 * The typed error of a refusal read off the wire (a failed call's status, or
 * a WriteStream message's refusal): by reason first, then by code.
 */
export function typedError(failure: RemoteFailure): FencerError {
  const byReason = (BY_REASON as Record<string, (failure: RemoteFailure) => FencerError>)[failure.reason];
  if (byReason) return byReason(failure);
  const code = failure.code as grpc.status;
  if (TRANSIENT_CODES.has(code)) return new UnavailableError(failure, true);
  if (code === grpc.status.RESOURCE_EXHAUSTED) return new ResourceExhaustedError(failure, true);
  if (code === grpc.status.UNAUTHENTICATED || code === grpc.status.PERMISSION_DENIED)
    return new AuthError(failure, false);
  return new InternalError(failure, false);
}

function isServiceError(error: unknown): error is grpc.ServiceError {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'number' && 'metadata' in error;
}

function optionalBigint(value: string | undefined): bigint | undefined {
  return value !== undefined && /^\d{1,20}$/.test(value) ? BigInt(value) : undefined;
}
