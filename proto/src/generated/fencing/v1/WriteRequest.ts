// Original file: fencing/v1/sink.proto

import type { Long } from '@grpc/proto-loader';

export interface WriteRequest {
  'resource'?: (string);
  'token'?: (number | string | Long);
  /**
   * Business identity of the result (task id, step), not a per-request id.
   */
  'result_id'?: (string);
  'payload'?: (Buffer | Uint8Array | string);
}

export interface WriteRequest__Output {
  'resource': (string);
  'token': (string);
  /**
   * Business identity of the result (task id, step), not a per-request id.
   */
  'result_id': (string);
  'payload': (Buffer);
}
