// Original file: fencing/v1/sink.proto

import type { Long } from '@grpc/proto-loader';

export interface AdvanceFenceRequest {
  'resource'?: (string);
  'token'?: (number | string | Long);
  /**
   * Identifies one grant attempt, so the coordinator can retry the same
   * advance idempotently.
   */
  'grant_id'?: (string);
}

export interface AdvanceFenceRequest__Output {
  'resource': (string);
  'token': (string);
  /**
   * Identifies one grant attempt, so the coordinator can retry the same
   * advance idempotently.
   */
  'grant_id': (string);
}
