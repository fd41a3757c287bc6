// @fencer/coordinator: the lease service (PROTOCOL.md L1–L8, R1–R4).
import type { Command } from 'commander';
import { buildCoordinatorCommand } from './config.js';
import { runCoordinator, type CoordinatorSeams } from './main.js';

export { startCoordinator, type RunningCoordinator, type CoordinatorDeps, type CoordinatorSeams } from './main.js';
export { coordinatorConfig, ConfigError, type CoordinatorConfig, type CoordinatorAuth } from './config.js';
export { COORDINATOR_ROLES } from './grpc/handlers.js';

// What a deliberately broken variant (@fencer/variants) composes a coordinator from.
export type { CoordinatorApi } from './core/coordinator.js';
export type { SinkPort, SinkAdvanceOutcome } from './core/sink-port.js';
export type { LeaseRules } from './core/lease-table.js';
export type { LeaseStore } from './core/store.js';

/** `fencer coordinator`, as the CLI mounts it (no seams); a variant passes its own to run the same command line. */
export function coordinatorCommand(seams: CoordinatorSeams = {}): Command {
  return buildCoordinatorCommand((config) => runCoordinator(config, seams));
}
