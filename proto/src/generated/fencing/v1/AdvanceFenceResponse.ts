// Original file: fencing/v1/sink.proto

import type { Long } from '@grpc/proto-loader';

export interface AdvanceFenceResponse {
  'fence'?: (number | string | Long);
}

export interface AdvanceFenceResponse__Output {
  'fence': (string);
}
