// @fencer/variants: deliberately broken sinks and coordinators for the chaos
// suite's negative controls, so that its checker is seen to catch them.
// Test code and this package's scripts only: dependency-cruiser forbids any
// other import, and no production package depends on it.
export { TwoStepEngine } from './two-step-engine.js';
export { WORKER_CLOCK_HEADER, workerClockEnv } from './worker-clock.js';
export {
  bareStatuses,
  forgettingGrants,
  forgettingRequests,
  grantFirst,
  lenientDecoding,
  lenientWrite,
  memoryResults,
  overwritingWrite,
  ownerlessWrite,
  revivingRenewals,
  saturatingTokens,
  staleAcceptingWrite,
  withoutRequestRecords,
} from './broken-rules.js';
export {
  GRANT_FIRST_DELAY_MS,
  TWO_STEP_PAUSE_MS,
  VARIANTS,
  runVariant,
  variantBin,
  type Variant,
  type VariantName,
} from './variants.js';
