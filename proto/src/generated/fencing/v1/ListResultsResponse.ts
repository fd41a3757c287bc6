// Original file: fencing/v1/sink.proto

import type { Long } from '@grpc/proto-loader';

export interface _fencing_v1_ListResultsResponse_Result {
  'result_id'?: (string);
  /**
   * The token the result was written with.
   */
  'token'?: (number | string | Long);
  'size_bytes'?: (number | string | Long);
}

export interface _fencing_v1_ListResultsResponse_Result__Output {
  'result_id': (string);
  /**
   * The token the result was written with.
   */
  'token': (string);
  'size_bytes': (string);
}

export interface ListResultsResponse {
  'fence'?: (number | string | Long);
  /**
   * The identity the fence is bound to (A5); empty when none.
   */
  'fence_owner_id'?: (string);
  'results'?: (_fencing_v1_ListResultsResponse_Result)[];
}

export interface ListResultsResponse__Output {
  'fence': (string);
  /**
   * The identity the fence is bound to (A5); empty when none.
   */
  'fence_owner_id': (string);
  'results': (_fencing_v1_ListResultsResponse_Result__Output)[];
}
