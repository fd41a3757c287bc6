// Original file: fencing/v1/coordinator.proto


export interface ReleaseResponse {
  'released'?: (boolean);
}

export interface ReleaseResponse__Output {
  'released': (boolean);
}
