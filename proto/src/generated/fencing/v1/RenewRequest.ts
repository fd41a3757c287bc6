// Original file: fencing/v1/coordinator.proto

import type { Long } from '@grpc/proto-loader';

export interface RenewRequest {
  'resource'?: (string);
  'owner_id'?: (string);
  'incarnation'?: (number | string | Long);
  'token'?: (number | string | Long);
  /**
   * 0 keeps the current TTL; otherwise the lease's TTL from now on (L4).
   */
  'ttl_ms'?: (number | string | Long);
}

export interface RenewRequest__Output {
  'resource': (string);
  'owner_id': (string);
  'incarnation': (string);
  'token': (string);
  /**
   * 0 keeps the current TTL; otherwise the lease's TTL from now on (L4).
   */
  'ttl_ms': (string);
}
