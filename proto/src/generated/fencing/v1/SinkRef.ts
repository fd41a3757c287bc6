// Original file: fencing/v1/coordinator.proto


/**
 * A sink a coordinator fronts (P1, P3).
 */
export interface SinkRef {
  /**
   * Its name (--sink NAME=HOST:PORT; `default` for a bare address).
   */
  'name'?: (string);
  /**
   * HOST:PORT as the coordinator reaches it; a client on another route may
   * know it by another address, and finds it by asking its sinks (P4).
   */
  'address'?: (string);
}

/**
 * A sink a coordinator fronts (P1, P3).
 */
export interface SinkRef__Output {
  /**
   * Its name (--sink NAME=HOST:PORT; `default` for a bare address).
   */
  'name': (string);
  /**
   * HOST:PORT as the coordinator reaches it; a client on another route may
   * know it by another address, and finds it by asking its sinks (P4).
   */
  'address': (string);
}
