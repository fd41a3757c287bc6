// Original file: fencing/v1/sink.proto


export interface ListResultsRequest {
  'resource'?: (string);
  /**
   * How many results at most: 1..1000.
   */
  'limit'?: (number);
}

export interface ListResultsRequest__Output {
  'resource': (string);
  /**
   * How many results at most: 1..1000.
   */
  'limit': (number);
}
