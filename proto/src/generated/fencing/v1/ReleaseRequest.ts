// Original file: fencing/v1/coordinator.proto

import type { Long } from '@grpc/proto-loader';

export interface ReleaseRequest {
  'resource'?: (string);
  'owner_id'?: (string);
  'incarnation'?: (number | string | Long);
  'token'?: (number | string | Long);
}

export interface ReleaseRequest__Output {
  'resource': (string);
  'owner_id': (string);
  'incarnation': (string);
  'token': (string);
}
