import { Command } from 'commander';

/** `fencer sink` (placeholder until the sink lands). */
export function sinkCommand(): Command {
  return new Command('sink').description('the fenced write target');
}
