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
  /**
   * The holder the fence is granted to (A5): with auth on, the sink accepts
   * a Write under this fence only from this identity (else PERMISSION_DENIED
   * / OWNER_MISMATCH). Empty binds no identity (--insecure, old clients).
   */
  'owner_id'?: (string);
}

export interface AdvanceFenceRequest__Output {
  'resource': (string);
  'token': (string);
  /**
   * Identifies one grant attempt, so the coordinator can retry the same
   * advance idempotently.
   */
  'grant_id': (string);
  /**
   * The holder the fence is granted to (A5): with auth on, the sink accepts
   * a Write under this fence only from this identity (else PERMISSION_DENIED
   * / OWNER_MISMATCH). Empty binds no identity (--insecure, old clients).
   */
  'owner_id': (string);
}
