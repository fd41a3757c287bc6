// @fencer/sink: the fenced write target (PROTOCOL.md F1–F6).
import type { Command } from 'commander';
import { buildSinkCommand } from './config.js';
import { runSink } from './main.js';

export { startSink, type RunningSink } from './main.js';
export { sinkConfig, ConfigError, type SinkConfig, type SinkAuth, type SinkOptions } from './config.js';

/** `fencer sink`, as the CLI mounts it. */
export function sinkCommand(): Command {
  return buildSinkCommand(runSink);
}
