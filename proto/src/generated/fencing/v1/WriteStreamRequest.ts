// Original file: fencing/v1/sink.proto

import type { WriteRequest as _fencing_v1_WriteRequest, WriteRequest__Output as _fencing_v1_WriteRequest__Output } from '../../fencing/v1/WriteRequest.js';

export interface WriteStreamRequest {
  /**
   * One Write; a message without it is refused INVALID_ARGUMENT naming `write`.
   */
  'write'?: (_fencing_v1_WriteRequest | null);
  /**
   * The caller's W3C trace context (`traceparent`, `tracestate`), which a
   * unary Write carries in its metadata: a traced sink handles the message
   * in that trace. Empty when the caller does not trace.
   */
  'trace_context'?: ({[key: string]: string});
}

export interface WriteStreamRequest__Output {
  /**
   * One Write; a message without it is refused INVALID_ARGUMENT naming `write`.
   */
  'write': (_fencing_v1_WriteRequest__Output | null);
  /**
   * The caller's W3C trace context (`traceparent`, `tracestate`), which a
   * unary Write carries in its metadata: a traced sink handles the message
   * in that trace. Empty when the caller does not trace.
   */
  'trace_context': ({[key: string]: string});
}
