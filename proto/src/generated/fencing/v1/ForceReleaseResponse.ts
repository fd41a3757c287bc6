// Original file: fencing/v1/coordinator.proto

import type { Long } from '@grpc/proto-loader';

export interface ForceReleaseResponse {
  /**
   * True when this call fenced the grant off; false when it already was, or
   * `token` is not the resource's latest grant (nothing changed).
   */
  'forced'?: (boolean);
  /**
   * When forced: the sink's fence now, above `token`. Bound at the sink to
   * the admin's identity (A5), so no worker can write under it.
   */
  'fence'?: (number | string | Long);
  /**
   * The last token granted for the resource, as in Describe.
   */
  'last_token'?: (number | string | Long);
}

export interface ForceReleaseResponse__Output {
  /**
   * True when this call fenced the grant off; false when it already was, or
   * `token` is not the resource's latest grant (nothing changed).
   */
  'forced': (boolean);
  /**
   * When forced: the sink's fence now, above `token`. Bound at the sink to
   * the admin's identity (A5), so no worker can write under it.
   */
  'fence': (string);
  /**
   * The last token granted for the resource, as in Describe.
   */
  'last_token': (string);
}
