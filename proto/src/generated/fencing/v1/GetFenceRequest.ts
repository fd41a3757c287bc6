// Original file: fencing/v1/sink.proto


export interface GetFenceRequest {
  'resource'?: (string);
}

export interface GetFenceRequest__Output {
  'resource': (string);
}
