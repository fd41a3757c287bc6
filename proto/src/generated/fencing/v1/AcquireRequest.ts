// Original file: fencing/v1/coordinator.proto

import type { Long } from '@grpc/proto-loader';

export interface AcquireRequest {
  /**
   * Fresh per logical acquisition, reused for each retry of it (R4).
   */
  'request_id'?: (string);
  'resource'?: (string);
  'owner_id'?: (string);
  /**
   * Distinguishes restarts of the same owner; > 0.
   */
  'incarnation'?: (number | string | Long);
  'ttl_ms'?: (number | string | Long);
}

export interface AcquireRequest__Output {
  /**
   * Fresh per logical acquisition, reused for each retry of it (R4).
   */
  'request_id': (string);
  'resource': (string);
  'owner_id': (string);
  /**
   * Distinguishes restarts of the same owner; > 0.
   */
  'incarnation': (string);
  'ttl_ms': (string);
}
