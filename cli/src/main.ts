// `fencer`: one command line for every part. Each subcommand is defined by
// the package that implements it; this file only assembles them.
import { Command } from 'commander';
import { benchCommand } from '@fencer/bench';
import { chaosCommand } from '@fencer/chaos';
import { toxiproxyCommand } from '@fencer/toxiproxy';
import { coordinatorCommand } from '@fencer/coordinator';
import { sinkCommand } from '@fencer/sink';
import { credentialsCommand, healthCommand, traceCommand } from '@fencer/supervisor';
import { conformanceCommand } from '@fencer/conformance';
import { demoCommand } from '@fencer/demo';
import { workerCommand } from '@fencer/worker';
import { startTracing } from '@fencer/server-kit/tracing';
import { inspectCommand, releaseCommand } from './admin.js';
import { clusterCommand } from './cluster.js';

// grpc-js sends an IP target (127.0.0.1:PORT) as the TLS ServerName
// (grpc/grpc-node#1919), and Node answers with a one-time DEP0123 warning on
// stderr of every TLS client of an IP: noise on `fencer health` and every
// worker's output. The server's certificate is still checked against its IP
// SAN, so only this one warning is dropped; every other still prints.
for (const print of process.listeners('warning')) {
  process.off('warning', print);
  process.on('warning', (warning: Error & { code?: string }) => {
    if (warning.code !== 'DEP0123') print(warning);
  });
}

const program = new Command('fencer')
  .description('Leases with fencing tokens: a coordinator that grants them and a sink that enforces them')
  .version('0.1.0')
  .showSuggestionAfterError(true)
  .addCommand(sinkCommand())
  .addCommand(coordinatorCommand())
  .addCommand(clusterCommand())
  .addCommand(demoCommand())
  .addCommand(workerCommand({ startTracing: (traceFile) => startTracing('worker', traceFile) }))
  .addCommand(toxiproxyCommand())
  .addCommand(chaosCommand())
  .addCommand(benchCommand())
  .addCommand(healthCommand())
  .addCommand(traceCommand())
  .addCommand(inspectCommand())
  .addCommand(releaseCommand())
  .addCommand(credentialsCommand())
  .addCommand(conformanceCommand());

await program.parseAsync(process.argv);
