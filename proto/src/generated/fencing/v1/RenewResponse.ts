// Original file: fencing/v1/coordinator.proto

import type { Lease as _fencing_v1_Lease, Lease__Output as _fencing_v1_Lease__Output } from '../../fencing/v1/Lease.js';

export interface RenewResponse {
  'lease'?: (_fencing_v1_Lease | null);
}

export interface RenewResponse__Output {
  'lease': (_fencing_v1_Lease__Output | null);
}
