// Original file: fencing/v1/sink.proto

import type { Any as _google_protobuf_Any, Any__Output as _google_protobuf_Any__Output } from '../../google/protobuf/Any.js';

/**
 * Wire-identical to google.rpc.Status (the same field numbers and types), so
 * a client may decode these bytes as a google.rpc.Status, details included:
 * a google.rpc.ErrorInfo with the reason (STALE_TOKEN, ...) and metadata
 * such as "fence", and for INVALID_ARGUMENT a google.rpc.BadRequest.
 */
export interface WriteRefusal {
  /**
   * A google.rpc.Code value (the gRPC status code).
   */
  'code'?: (number);
  'message'?: (string);
  'details'?: (_google_protobuf_Any)[];
}

/**
 * Wire-identical to google.rpc.Status (the same field numbers and types), so
 * a client may decode these bytes as a google.rpc.Status, details included:
 * a google.rpc.ErrorInfo with the reason (STALE_TOKEN, ...) and metadata
 * such as "fence", and for INVALID_ARGUMENT a google.rpc.BadRequest.
 */
export interface WriteRefusal__Output {
  /**
   * A google.rpc.Code value (the gRPC status code).
   */
  'code': (number);
  'message': (string);
  'details': (_google_protobuf_Any__Output)[];
}
