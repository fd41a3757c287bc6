// Original file: fencing/v1/coordinator.proto

import type { Long } from '@grpc/proto-loader';

export interface ForceReleaseRequest {
  'resource'?: (string);
  /**
   * The token of the grant to end: the resource's latest (Describe's
   * last_token). > 0.
   */
  'token'?: (number | string | Long);
}

export interface ForceReleaseRequest__Output {
  'resource': (string);
  /**
   * The token of the grant to end: the resource's latest (Describe's
   * last_token). > 0.
   */
  'token': (string);
}
