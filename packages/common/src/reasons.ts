// The error model of PROTOCOL.md: every protocol reason and the gRPC code it
// always travels with. Codes are the numeric values of google.rpc.Code so
// this table needs no transport import.

const CODE = {
  ABORTED: 10,
  ALREADY_EXISTS: 6,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNAUTHENTICATED: 16,
  UNAVAILABLE: 14,
} as const;

/**
 * Reason → gRPC code. A worker that lost its lease is never told to retry:
 * STALE_TOKEN is FAILED_PRECONDITION, never ABORTED or UNAVAILABLE.
 */
export const REASON_CODES = Object.freeze({
  INVALID_FIELD: CODE.INVALID_ARGUMENT,
  OWNER_MISMATCH: CODE.PERMISSION_DENIED,
  LEASE_HELD: CODE.ABORTED,
  LEASE_EXPIRED: CODE.FAILED_PRECONDITION,
  NOT_LEASE_HOLDER: CODE.FAILED_PRECONDITION,
  REQUEST_ID_REUSED: CODE.INVALID_ARGUMENT,
  SINK_UNAVAILABLE: CODE.UNAVAILABLE,
  STALE_TOKEN: CODE.FAILED_PRECONDITION,
  TOKEN_NOT_ISSUED: CODE.FAILED_PRECONDITION,
  RESULT_CONFLICT: CODE.ALREADY_EXISTS,
  RESULT_NOT_FOUND: CODE.NOT_FOUND,
  FENCE_REGRESSION: CODE.FAILED_PRECONDITION,
  FENCE_CONFLICT: CODE.ABORTED,
  // T1: never retried, since no later attempt can find a token above the last uint64.
  TOKEN_SPACE_EXHAUSTED: CODE.RESOURCE_EXHAUSTED,
  // V3: the bytes are not a valid encoding of the request.
  MALFORMED_MESSAGE: CODE.INVALID_ARGUMENT,
  // V4: one client's limit, reached; the call did nothing and may be retried later.
  RATE_LIMITED: CODE.RESOURCE_EXHAUSTED,
  TOO_MANY_STREAMS: CODE.RESOURCE_EXHAUSTED,
  RECORDS_FULL: CODE.RESOURCE_EXHAUSTED,
  // V2, V4 (this project's extension): a request message past the server's
  // bound after decompression. Never retried: the same request stays too large.
  MESSAGE_TOO_LARGE: CODE.RESOURCE_EXHAUSTED,
  // A6, V4 (this project's extension): a call's metadata (its headers) past
  // the server's bound. Never retried: the same metadata stays too large.
  METADATA_TOO_LARGE: CODE.RESOURCE_EXHAUSTED,
  // T3: a durable write failed; the service stops its writes and exits, so
  // the call may be retried once it is back (with the same request or result id).
  STORAGE_UNAVAILABLE: CODE.UNAVAILABLE,
  // H2: this coordinator replica does not lead now; the leader's address is
  // in the details (`leader`) when known. Retried there with the same
  // request id (H7, R4): the call may have been written before leadership
  // was lost, so it is never an answer that nothing happened.
  NOT_LEADER: CODE.UNAVAILABLE,
  // A2: not in the protocol's table, but every refusal carries a reason.
  UNAUTHENTICATED: CODE.UNAUTHENTICATED,
  PERMISSION_DENIED: CODE.PERMISSION_DENIED,
  INTERNAL: CODE.INTERNAL,
  // The service is shutting down or its store failed; safe to retry elsewhere.
  UNAVAILABLE: CODE.UNAVAILABLE,
} as const);

/** Every reason a refusal can carry on the wire (ErrorInfo.reason and the `fencing-reason` trailer). */
export type Reason = keyof typeof REASON_CODES;
