// Original file: fencing/v1/sink.proto

import type { WriteResponse as _fencing_v1_WriteResponse, WriteResponse__Output as _fencing_v1_WriteResponse__Output } from '../../fencing/v1/WriteResponse.js';
import type { WriteRefusal as _fencing_v1_WriteRefusal, WriteRefusal__Output as _fencing_v1_WriteRefusal__Output } from '../../fencing/v1/WriteRefusal.js';

export interface WriteStreamResponse {
  /**
   * The resource and result_id of the request this answers, as sent; both
   * empty when the request's bytes could not be decoded (MALFORMED_MESSAGE).
   */
  'resource'?: (string);
  'result_id'?: (string);
  /**
   * Applied or replayed, as a unary Write would have answered.
   */
  'written'?: (_fencing_v1_WriteResponse | null);
  /**
   * Refused, with the status a unary Write would have ended with.
   */
  'refused'?: (_fencing_v1_WriteRefusal | null);
  'answer'?: "written"|"refused";
}

export interface WriteStreamResponse__Output {
  /**
   * The resource and result_id of the request this answers, as sent; both
   * empty when the request's bytes could not be decoded (MALFORMED_MESSAGE).
   */
  'resource': (string);
  'result_id': (string);
  /**
   * Applied or replayed, as a unary Write would have answered.
   */
  'written'?: (_fencing_v1_WriteResponse__Output | null);
  /**
   * Refused, with the status a unary Write would have ended with.
   */
  'refused'?: (_fencing_v1_WriteRefusal__Output | null);
  'answer'?: "written"|"refused";
}
