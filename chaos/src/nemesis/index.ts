// The nemeses of the chaos suite: faults as objects with start() and heal()
// (fault.ts), on a cluster's links (network.ts) and processes (process.ts).
export {
  NEMESIS_KINDS,
  defineNemesis,
  type FaultRecord,
  type FaultTarget,
  type Injected,
  type Nemesis,
  type NemesisKind,
} from './fault.js';
export {
  blackhole,
  clusterLink,
  connectionReset,
  latencySpike,
  partition,
  replyLoss,
  type Direction,
  type LatencyOptions,
  type LinkTarget,
  type ResetOptions,
} from './network.js';
export {
  crash,
  pause,
  serviceProcess,
  splitBrain,
  startRivalCoordinator,
  type ProcessTarget,
  type RivalOptions,
} from './process.js';
