// The transport-free half of the kit: safe to import from a service's core/.
export { type Clock, systemClock, FakeClock } from './clock.js';
export { KeyedLock } from './keyed-lock.js';
export { type Reason, REASON_CODES } from './reasons.js';
