// A Toxiproxy-compatible server in this process: the HTTP API on `listen`
// and a listener per enabled proxy. `stop` closes all of it.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { joinHostPort, listenAddress, StartupError } from '@fencer/cli-kit';
import { silentLogger, type Logger } from '@fencer/server-kit';
import { apiHandler } from './api.js';
import { ApiError } from './errors.js';
import { decodePopulateBody } from './proxy-spec.js';
import { PopulateError, ProxyRegistry } from './registry.js';

/** Options of startToxiproxy. */
export interface ToxiproxyOptions {
  /** HOST:PORT for the HTTP API; port 0 picks a free port. */
  readonly listen: string;
  readonly log?: Logger;
  /** A JSON array of proxies to populate at start, like Toxiproxy's `-config`; a bad file is logged and skipped. */
  readonly configFile?: string;
}

/** A running server. */
export interface RunningToxiproxy {
  /** HOST:PORT the API is bound to. */
  readonly address: string;
  /** Bytes the proxies hold in memory for live connections right now (input queues and unflushed writes). */
  bufferedBytes(): number;
  /** Closes the API, every proxy listener and every live connection. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the API on `options.listen`, then populates from `configFile`.
 * Rejects with StartupError if the address is malformed or cannot be bound.
 */
export async function startToxiproxy(options: ToxiproxyOptions): Promise<RunningToxiproxy> {
  const log = options.log ?? silentLogger;
  const { host, port } = listenAddress('serve the Toxiproxy API', options.listen);
  const registry = new ProxyRegistry(log);
  const server = createServer(apiHandler(registry, log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new StartupError(`cannot serve the Toxiproxy API on ${options.listen}: ${error.code ?? error.message}`)),
    );
    server.listen({ host, port }, resolve);
  });
  server.on('error', (error) => log.error({ err: error }, 'API server failed'));
  const bound = server.address() as AddressInfo;
  if (options.configFile !== undefined) await populateFromFile(registry, options.configFile, log);
  let stopping: Promise<void> | undefined;
  return {
    address: joinHostPort(bound.address, bound.port),
    bufferedBytes: () => registry.bufferedBytes(),
    stop: () =>
      (stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await registry.serially(() => registry.close());
        await closed;
      })()),
  };
}

/** TOXIPROXY-API.md §1, §8: `-config` runs a populate; on error the server logs it and carries on. */
async function populateFromFile(registry: ProxyRegistry, file: string, log: Logger): Promise<void> {
  try {
    const entries = decodePopulateBody(await readFile(file));
    const proxies = await registry.serially(() => registry.populate(entries));
    log.info({ config: file, proxies: proxies.map((p) => p.name) }, 'populated proxies from config');
  } catch (error) {
    if (!(error instanceof ApiError || error instanceof PopulateError || (error as NodeJS.ErrnoException).code)) {
      throw error;
    }
    log.error({ err: error, config: file }, 'cannot populate from config; carrying on');
  }
}
