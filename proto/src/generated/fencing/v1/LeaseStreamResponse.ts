// Original file: fencing/v1/coordinator.proto

import type { AcquireResponse as _fencing_v1_AcquireResponse, AcquireResponse__Output as _fencing_v1_AcquireResponse__Output } from '../../fencing/v1/AcquireResponse.js';
import type { RenewResponse as _fencing_v1_RenewResponse, RenewResponse__Output as _fencing_v1_RenewResponse__Output } from '../../fencing/v1/RenewResponse.js';
import type { ReleaseResponse as _fencing_v1_ReleaseResponse, ReleaseResponse__Output as _fencing_v1_ReleaseResponse__Output } from '../../fencing/v1/ReleaseResponse.js';
import type { WriteRefusal as _fencing_v1_WriteRefusal, WriteRefusal__Output as _fencing_v1_WriteRefusal__Output } from '../../fencing/v1/WriteRefusal.js';
import type { Long } from '@grpc/proto-loader';

export interface LeaseStreamResponse {
  /**
   * The call_id of the request this answers.
   */
  'call_id'?: (number | string | Long);
  /**
   * As the unary call would have answered, for the request's kind.
   */
  'acquired'?: (_fencing_v1_AcquireResponse | null);
  'renewed'?: (_fencing_v1_RenewResponse | null);
  'released'?: (_fencing_v1_ReleaseResponse | null);
  /**
   * Refused, with the status the unary call would have ended with
   * (google.rpc.Status-shaped: see WriteRefusal), NOT_LEADER's leader
   * address among its ErrorInfo metadata as for a unary call (H7).
   */
  'refused'?: (_fencing_v1_WriteRefusal | null);
  'answer'?: "acquired"|"renewed"|"released"|"refused";
}

export interface LeaseStreamResponse__Output {
  /**
   * The call_id of the request this answers.
   */
  'call_id': (string);
  /**
   * As the unary call would have answered, for the request's kind.
   */
  'acquired'?: (_fencing_v1_AcquireResponse__Output | null);
  'renewed'?: (_fencing_v1_RenewResponse__Output | null);
  'released'?: (_fencing_v1_ReleaseResponse__Output | null);
  /**
   * Refused, with the status the unary call would have ended with
   * (google.rpc.Status-shaped: see WriteRefusal), NOT_LEADER's leader
   * address among its ErrorInfo metadata as for a unary call (H7).
   */
  'refused'?: (_fencing_v1_WriteRefusal__Output | null);
  'answer'?: "acquired"|"renewed"|"released"|"refused";
}
