// Original file: fencing/v1/sink.proto

import type { Long } from '@grpc/proto-loader';

export interface GetFenceResponse {
  'fence'?: (number | string | Long);
}

export interface GetFenceResponse__Output {
  'fence': (string);
}
