/**
 * The only source of time for lease arithmetic (PROTOCOL.md L1): monotonic
 * milliseconds since an arbitrary origin. Never wall-clock, never a peer's.
 */
export interface Clock {
  nowMs(): number;
}

/** Production clock: `performance.now()`, immune to wall-clock steps. */
// eslint-disable-next-line no-restricted-globals -- the one place time enters: the port's production side
export const systemClock: Clock = Object.freeze({ nowMs: () => performance.now() });

/** A clock that moves only when a test says so. */
export class FakeClock implements Clock {
  #nowMs: number;

  constructor(startMs = 1_000) {
    this.#nowMs = startMs;
  }

  nowMs(): number {
    return this.#nowMs;
  }

  /** Moves time forward; a negative step is a bug in the test. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a monotonic clock cannot move by ${ms} ms`);
    this.#nowMs += ms;
  }
}
