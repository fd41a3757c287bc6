// Original file: fencing/v1/sink.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadResponse {
  'payload'?: (Buffer | Uint8Array | string);
  /**
   * The token under which the result was stored.
   */
  'token'?: (number | string | Long);
}

export interface ReadResponse__Output {
  'payload': (Buffer);
  /**
   * The token under which the result was stored.
   */
  'token': (string);
}
