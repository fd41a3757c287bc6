// Original file: fencing/v1/coordinator.proto

import type { Lease as _fencing_v1_Lease, Lease__Output as _fencing_v1_Lease__Output } from '../../fencing/v1/Lease.js';

export interface AcquireResponse {
  'lease'?: (_fencing_v1_Lease | null);
  /**
   * True when this answers a retry of an already granted request_id (R1).
   */
  'replayed'?: (boolean);
}

export interface AcquireResponse__Output {
  'lease': (_fencing_v1_Lease__Output | null);
  /**
   * True when this answers a retry of an already granted request_id (R1).
   */
  'replayed': (boolean);
}
