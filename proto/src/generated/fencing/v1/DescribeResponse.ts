// Original file: fencing/v1/coordinator.proto

import type { Lease as _fencing_v1_Lease, Lease__Output as _fencing_v1_Lease__Output } from '../../fencing/v1/Lease.js';
import type { Long } from '@grpc/proto-loader';

export interface DescribeResponse {
  /**
   * Unset when the resource is free (never granted, expired or released).
   */
  'lease'?: (_fencing_v1_Lease | null);
  /**
   * The last token granted; 0 if none. Burned tokens are not reported.
   */
  'last_token'?: (number | string | Long);
  /**
   * The token the next grant (or fence) would reserve, unless the sink's
   * fence turns out to be higher (L6); 0 once the token space is used up (T1).
   */
  'next_token'?: (number | string | Long);
}

export interface DescribeResponse__Output {
  /**
   * Unset when the resource is free (never granted, expired or released).
   */
  'lease': (_fencing_v1_Lease__Output | null);
  /**
   * The last token granted; 0 if none. Burned tokens are not reported.
   */
  'last_token': (string);
  /**
   * The token the next grant (or fence) would reserve, unless the sink's
   * fence turns out to be higher (L6); 0 once the token space is used up (T1).
   */
  'next_token': (string);
}
