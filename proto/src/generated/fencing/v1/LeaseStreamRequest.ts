// Original file: fencing/v1/coordinator.proto

import type { AcquireRequest as _fencing_v1_AcquireRequest, AcquireRequest__Output as _fencing_v1_AcquireRequest__Output } from '../../fencing/v1/AcquireRequest.js';
import type { RenewRequest as _fencing_v1_RenewRequest, RenewRequest__Output as _fencing_v1_RenewRequest__Output } from '../../fencing/v1/RenewRequest.js';
import type { ReleaseRequest as _fencing_v1_ReleaseRequest, ReleaseRequest__Output as _fencing_v1_ReleaseRequest__Output } from '../../fencing/v1/ReleaseRequest.js';
import type { Long } from '@grpc/proto-loader';

export interface LeaseStreamRequest {
  /**
   * Chosen by the client, unique among its unanswered requests on this
   * stream; the answer names it. Any value but 0, which names an answer to
   * bytes that could not be decoded (MALFORMED_MESSAGE).
   */
  'call_id'?: (number | string | Long);
  'acquire'?: (_fencing_v1_AcquireRequest | null);
  'renew'?: (_fencing_v1_RenewRequest | null);
  'release'?: (_fencing_v1_ReleaseRequest | null);
  /**
   * The caller's W3C trace context (`traceparent`, `tracestate`), which a
   * unary call carries in its metadata: a traced coordinator handles the
   * message in that trace. Empty when the caller does not trace.
   */
  'trace_context'?: ({[key: string]: string});
  /**
   * Exactly one; a request without one is refused INVALID_ARGUMENT naming `call`.
   */
  'call'?: "acquire"|"renew"|"release";
}

export interface LeaseStreamRequest__Output {
  /**
   * Chosen by the client, unique among its unanswered requests on this
   * stream; the answer names it. Any value but 0, which names an answer to
   * bytes that could not be decoded (MALFORMED_MESSAGE).
   */
  'call_id': (string);
  'acquire'?: (_fencing_v1_AcquireRequest__Output | null);
  'renew'?: (_fencing_v1_RenewRequest__Output | null);
  'release'?: (_fencing_v1_ReleaseRequest__Output | null);
  /**
   * The caller's W3C trace context (`traceparent`, `tracestate`), which a
   * unary call carries in its metadata: a traced coordinator handles the
   * message in that trace. Empty when the caller does not trace.
   */
  'trace_context': ({[key: string]: string});
  /**
   * Exactly one; a request without one is refused INVALID_ARGUMENT naming `call`.
   */
  'call'?: "acquire"|"renew"|"release";
}
