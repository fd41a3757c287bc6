// @fencer/sink: the fenced write target (PROTOCOL.md F1–F6).
import type { Command } from 'commander';
import { buildSinkCommand } from './config.js';
import { runSink, type SinkSeams } from './main.js';

export { startSink, type RunningSink, type SinkSeams } from './main.js';
export { sinkConfig, ConfigError, type SinkConfig, type SinkAuth, type SinkOptions } from './config.js';

// What a deliberately broken variant (@fencer/variants) composes a sink from,
// and what the coordinator's test double of a sink is held to.
export { SinkEngine, type SinkApi, type WriteCommand, type WriteOutcome } from './core/sink-engine.js';
export {
  decideAdvance,
  decideWrite,
  type FenceRecord,
  type StoredResult,
  type WritePolicy,
} from './core/fence-policy.js';
export type { ResultSummary, SinkStore } from './core/store.js';

/** `fencer sink`, as the CLI mounts it (no seams); a variant passes its own to run the same command line. */
export function sinkCommand(seams: SinkSeams = {}): Command {
  return buildSinkCommand((config) => runSink(config, seams));
}
