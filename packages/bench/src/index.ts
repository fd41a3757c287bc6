// @fencer/bench: `fencer bench`, the project's RPCs measured beside the raw
// limits and etcd in one run.
export { benchCommand } from './command.js';
export {
  CASES,
  RATIOS,
  GOALS,
  type Goal,
  shardedRatios,
  type BenchCase,
  type OpenCase,
  type Operation,
  type RatioDefinition,
} from './cases.js';
export { runBench, type BenchConfig, type BenchReport } from './run.js';
export { MAX_WINDOWS } from './warm-up.js';
