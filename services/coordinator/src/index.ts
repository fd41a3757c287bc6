// @fencer/coordinator: the lease service (PROTOCOL.md L1–L8, R1–R4).
import type { Command } from 'commander';
import { buildCoordinatorCommand } from './config.js';
import { runCoordinator } from './main.js';

export { startCoordinator, type RunningCoordinator, type CoordinatorDeps } from './main.js';
export { coordinatorConfig, ConfigError, type CoordinatorConfig, type CoordinatorAuth } from './config.js';
export { COORDINATOR_ROLES } from './grpc/handlers.js';

/** `fencer coordinator`, as the CLI mounts it. */
export function coordinatorCommand(): Command {
  return buildCoordinatorCommand(runCoordinator);
}
