// Original file: fencing/v1/sink.proto

import type { Long } from '@grpc/proto-loader';

// Original file: fencing/v1/sink.proto

export const _fencing_v1_WriteResponse_Outcome = {
  OUTCOME_UNSPECIFIED: 'OUTCOME_UNSPECIFIED',
  /**
   * The result was stored by this call.
   */
  APPLIED: 'APPLIED',
  /**
   * The same result (same payload) was already stored; nothing changed.
   */
  REPLAYED: 'REPLAYED',
} as const;

export type _fencing_v1_WriteResponse_Outcome =
  | 'OUTCOME_UNSPECIFIED'
  | 0
  /**
   * The result was stored by this call.
   */
  | 'APPLIED'
  | 1
  /**
   * The same result (same payload) was already stored; nothing changed.
   */
  | 'REPLAYED'
  | 2

export type _fencing_v1_WriteResponse_Outcome__Output = typeof _fencing_v1_WriteResponse_Outcome[keyof typeof _fencing_v1_WriteResponse_Outcome]

export interface WriteResponse {
  'outcome'?: (_fencing_v1_WriteResponse_Outcome);
  'fence'?: (number | string | Long);
}

export interface WriteResponse__Output {
  'outcome': (_fencing_v1_WriteResponse_Outcome__Output);
  'fence': (string);
}
