// Original file: fencing/v1/sink.proto


export interface ReadRequest {
  'resource'?: (string);
  'result_id'?: (string);
}

export interface ReadRequest__Output {
  'resource': (string);
  'result_id': (string);
}
