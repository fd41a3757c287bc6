// Original file: fencing/v1/sink.proto

import type { AdvanceFenceResponse as _fencing_v1_AdvanceFenceResponse, AdvanceFenceResponse__Output as _fencing_v1_AdvanceFenceResponse__Output } from '../../fencing/v1/AdvanceFenceResponse.js';
import type { WriteRefusal as _fencing_v1_WriteRefusal, WriteRefusal__Output as _fencing_v1_WriteRefusal__Output } from '../../fencing/v1/WriteRefusal.js';

export interface AdvanceFenceStreamResponse {
  /**
   * The resource and grant_id of the request this answers, as sent; both
   * empty when the request's bytes could not be decoded (MALFORMED_MESSAGE).
   */
  'resource'?: (string);
  'grant_id'?: (string);
  /**
   * Advanced (or the same grant's retry), as the unary call would have answered.
   */
  'advanced'?: (_fencing_v1_AdvanceFenceResponse | null);
  /**
   * Refused (FENCE_REGRESSION with the fence, INVALID_ARGUMENT...), with
   * the status the unary call would have ended with: the same
   * google.rpc.Status-shaped message WriteStream refuses with.
   */
  'refused'?: (_fencing_v1_WriteRefusal | null);
  'answer'?: "advanced"|"refused";
}

export interface AdvanceFenceStreamResponse__Output {
  /**
   * The resource and grant_id of the request this answers, as sent; both
   * empty when the request's bytes could not be decoded (MALFORMED_MESSAGE).
   */
  'resource': (string);
  'grant_id': (string);
  /**
   * Advanced (or the same grant's retry), as the unary call would have answered.
   */
  'advanced'?: (_fencing_v1_AdvanceFenceResponse__Output | null);
  /**
   * Refused (FENCE_REGRESSION with the fence, INVALID_ARGUMENT...), with
   * the status the unary call would have ended with: the same
   * google.rpc.Status-shaped message WriteStream refuses with.
   */
  'refused'?: (_fencing_v1_WriteRefusal__Output | null);
  'answer'?: "advanced"|"refused";
}
