// Original file: fencing/v1/coordinator.proto

import type { Long } from '@grpc/proto-loader';

export interface Lease {
  'resource'?: (string);
  'owner_id'?: (string);
  'incarnation'?: (number | string | Long);
  /**
   * The fencing token: strictly increasing per resource (L6).
   */
  'token'?: (number | string | Long);
  'ttl_ms'?: (number | string | Long);
  /**
   * Time left as the coordinator's monotonic clock saw it when answering;
   * a worker starts its own deadline when it sent the request (L1).
   */
  'remaining_ms'?: (number | string | Long);
}

export interface Lease__Output {
  'resource': (string);
  'owner_id': (string);
  'incarnation': (string);
  /**
   * The fencing token: strictly increasing per resource (L6).
   */
  'token': (string);
  'ttl_ms': (string);
  /**
   * Time left as the coordinator's monotonic clock saw it when answering;
   * a worker starts its own deadline when it sent the request (L1).
   */
  'remaining_ms': (string);
}
