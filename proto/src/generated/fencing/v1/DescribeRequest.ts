// Original file: fencing/v1/coordinator.proto


export interface DescribeRequest {
  'resource'?: (string);
}

export interface DescribeRequest__Output {
  'resource': (string);
}
