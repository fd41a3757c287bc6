// @fencer/common: the transport-free ground floor. No gRPC, LevelDB, timers
// or `process`, so every package, a service's core/ included, may import it.
export { type Clock, systemClock, FakeClock } from './clock.js';
export { KeyedLock } from './keyed-lock.js';
export { type Phases, type PhaseAttributes, unrecorded } from './phases.js';
export { type Reason, REASON_CODES } from './reasons.js';
export { unreachable, settleAll } from './outcomes.js';
export { prng } from './prng.js';
export { StoreFailedError, NotLeaderError } from './storage.js';
export { UINT64_MAX } from './uint64.js';
export { markdownTable } from './markdown-table.js';
