// `fencer`: one command line for every part. Each subcommand is defined by
// the package that implements it; this file only assembles them.
import { Command } from 'commander';
import { chaosCommand, toxiproxyCommand } from '@fencer/chaos';
import { coordinatorCommand } from '@fencer/coordinator';
import { sinkCommand } from '@fencer/sink';
import { credentialsCommand, healthCommand } from '@fencer/supervisor';
import { demoCommand } from '@fencer/demo';
import { workerCommand } from '@fencer/worker';
import { clusterCommand } from './cluster.js';

const program = new Command('fencer')
  .description('Leases with fencing tokens: a coordinator that grants them and a sink that enforces them')
  .version('0.1.0')
  .showSuggestionAfterError(true)
  .addCommand(sinkCommand())
  .addCommand(coordinatorCommand())
  .addCommand(clusterCommand())
  .addCommand(demoCommand())
  .addCommand(workerCommand())
  .addCommand(toxiproxyCommand())
  .addCommand(chaosCommand())
  .addCommand(healthCommand())
  .addCommand(credentialsCommand());

await program.parseAsync(process.argv);
