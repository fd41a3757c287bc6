// @fencer/chaos: real faults between real fencer processes (nemeses that
// drive the fault proxy, @fencer/toxiproxy or a real Toxiproxy, and the
// processes), the checker that judges what they recorded, and the report
// that draws it.
export {
  checkRound,
  racingPayload,
  successorPayload,
  type RoundHistory,
  type StoredValue,
  type Unchecked,
  type Violation,
  type WriteAnswer,
} from './checker/round.js';
export { checkHistory, type CheckOptions, type HistoryCheck } from './checker/check.js';
export { OPPORTUNITY_MEANINGS, opportunities, type Opportunities } from './checker/opportunities.js';
export {
  operationFromCall,
  operationInFlight,
  type FaultPeriod,
  type FinalState,
  type History,
  type Method,
  type Operation,
  type Outcome,
  type StoredResult,
} from './checker/history.js';
export {
  DEFAULT_WORKLOAD,
  loopingWorkerArgs,
  mixWorkerArgs,
  readFinalState,
  WORKLOAD_MIXES,
  type WorkloadMix,
  type WorkloadOptions,
} from './workload/workload.js';
export * from './nemesis/index.js';
export {
  CLOCK_FLOOR_MS,
  Scenario,
  type ScenarioOptions,
  type ScenarioVerdict,
  type ScenarioWorker,
} from './scenario/harness.js';
export {
  REPLICA_SOAK_KINDS,
  runSoak,
  SOAK_KINDS,
  type SoakOptions,
  type SoakProgress,
  type SoakResult,
} from './soak/soak.js';
export { chaosCommand, type ChaosConfig } from './soak/command.js';
export { renderReport, writeReport, type ReportInput } from './report/html.js';
export { historyLines, writeHistory } from './history-export/json-lines.js';
