// `fencer toxiproxy`: the fault proxy as a process, with the ready line,
// JSON logs on stderr and a clean stop on SIGTERM/SIGINT.
import { Command, Option } from 'commander';
import { announceReady, configuredCommand, hostPort } from '@fencer/cli-kit';
import { createLogger, runUntilSignal } from '@fencer/server-kit';
import { startToxiproxy } from './server.js';

/** A validated, frozen `fencer toxiproxy` configuration. */
export interface ToxiproxyConfig {
  /** HOST:PORT for the HTTP API. */
  readonly listen: string;
  /** Proxies to populate at start, or undefined. */
  readonly configFile: string | undefined;
}

interface ToxiproxyFlags {
  listen: string;
  config?: string;
}

async function runToxiproxy(config: ToxiproxyConfig): Promise<void> {
  const log = createLogger('toxiproxy');
  await runUntilSignal('toxiproxy', log, async () => {
    const server = await startToxiproxy({
      listen: config.listen,
      log,
      ...(config.configFile === undefined ? {} : { configFile: config.configFile }),
    });
    log.info({ address: server.address, config: config.configFile }, 'toxiproxy ready');
    announceReady('toxiproxy', server.address);
    return server;
  });
}

/** The `toxiproxy` subcommand; bad flag values end in a one-line error and a non-zero exit. */
export function toxiproxyCommand(): Command {
  return configuredCommand<ToxiproxyFlags, ToxiproxyConfig>(
    new Command('toxiproxy').description(
      'a Toxiproxy-compatible fault proxy (HTTP API compatible with Toxiproxy 2.12)',
    ),
    [
      new Option('--listen <host:port>', 'address of the HTTP API; port 0 picks a free port')
        .env('FENCER_TOXIPROXY_LISTEN')
        .default('127.0.0.1:8474')
        .argParser(hostPort),
      new Option('--config <file>', 'JSON array of proxies to create at start, as Toxiproxy -config').env(
        'FENCER_TOXIPROXY_CONFIG',
      ),
    ],
    (flags) => Object.freeze({ listen: flags.listen, configFile: flags.config }),
    runToxiproxy,
  );
}
