// @fencer/chaos: real faults between real fencer processes, and the checker
// that judges what they recorded.
export { checkRound, racingPayload, successorPayload, type RoundHistory, type StoredValue, type Violation, type WriteAnswer } from './checker/round.js';
