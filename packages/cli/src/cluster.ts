import { Command } from 'commander';

/** `fencer cluster` (placeholder). */
export function clusterCommand(): Command {
  return new Command('cluster').description('sink + coordinator as separate processes');
}
