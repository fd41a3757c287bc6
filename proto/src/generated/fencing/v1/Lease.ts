// Original file: fencing/v1/coordinator.proto

import type { SinkRef as _fencing_v1_SinkRef, SinkRef__Output as _fencing_v1_SinkRef__Output } from '../../fencing/v1/SinkRef.js';
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
  /**
   * P3: the sink that owns the resource, where the holder writes.
   */
  'sink'?: (_fencing_v1_SinkRef | null);
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
  /**
   * P3: the sink that owns the resource, where the holder writes.
   */
  'sink': (_fencing_v1_SinkRef__Output | null);
}
