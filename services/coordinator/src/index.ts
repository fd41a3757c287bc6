import { Command } from 'commander';

/** `fencer coordinator` (placeholder until the coordinator lands). */
export function coordinatorCommand(): Command {
  return new Command('coordinator').description('the lease service');
}
