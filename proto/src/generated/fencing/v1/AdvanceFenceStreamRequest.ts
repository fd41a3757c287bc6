// Original file: fencing/v1/sink.proto

import type { AdvanceFenceRequest as _fencing_v1_AdvanceFenceRequest, AdvanceFenceRequest__Output as _fencing_v1_AdvanceFenceRequest__Output } from '../../fencing/v1/AdvanceFenceRequest.js';

export interface AdvanceFenceStreamRequest {
  /**
   * One AdvanceFence; a message without it is refused INVALID_ARGUMENT naming `advance`.
   */
  'advance'?: (_fencing_v1_AdvanceFenceRequest | null);
  /**
   * The caller's W3C trace context (`traceparent`, `tracestate`), which a
   * unary call carries in its metadata: a traced sink handles the message
   * in that trace. Empty when the caller does not trace.
   */
  'trace_context'?: ({[key: string]: string});
}

export interface AdvanceFenceStreamRequest__Output {
  /**
   * One AdvanceFence; a message without it is refused INVALID_ARGUMENT naming `advance`.
   */
  'advance': (_fencing_v1_AdvanceFenceRequest__Output | null);
  /**
   * The caller's W3C trace context (`traceparent`, `tracestate`), which a
   * unary call carries in its metadata: a traced sink handles the message
   * in that trace. Empty when the caller does not trace.
   */
  'trace_context': ({[key: string]: string});
}
