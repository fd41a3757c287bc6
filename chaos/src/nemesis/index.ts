// The nemeses of the chaos suite: faults as objects with start() and heal()
// (fault.ts), on a cluster's links (network.ts).
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
