// One proxy (TOXIPROXY-API.md §3): a listener while enabled, the live
// connections it accepted, and its toxics, which every live connection
// follows as they are added, updated and removed.
import { createServer, type AddressInfo, type Server } from 'node:net';
import { joinHostPort } from '@fencer/cli-kit';
import type { Logger } from '@fencer/server-kit';
import { Connection } from './connection.js';
import { AddressError, bindErrorText, formatTcpAddress, resolveTcpAddress } from './go-net.js';
import { toxicJson, type ToxicSpec } from './toxic-spec.js';

/** A proxy and its state; names are fixed, everything else may change. */
export class Proxy {
  /** The listen address: as given until bound, then the real bound `ip:port` (§3.1). */
  listen: string;
  upstream: string;
  private server: Server | undefined;
  private readonly connections = new Set<Connection>();
  private toxicList: ToxicSpec[] = [];

  constructor(
    readonly name: string,
    listen: string,
    upstream: string,
    private readonly log: Logger,
  ) {
    this.listen = listen;
    this.upstream = upstream;
  }

  /** True while the listener runs. */
  get enabled(): boolean {
    return this.server !== undefined;
  }

  /** The toxics, upstream ones first, each stream in the order added (§3). */
  get toxics(): readonly ToxicSpec[] {
    return [
      ...this.toxicList.filter((t) => t.direction === 'upstream'),
      ...this.toxicList.filter((t) => t.direction === 'downstream'),
    ];
  }

  /** The proxy object, keys in the real server's order (§3). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      listen: this.listen,
      upstream: this.upstream,
      enabled: this.enabled,
      // TOXIPROXY-API.md §3: the real server always emits an empty `Logger` object.
      Logger: {},
      toxics: this.toxics.map(toxicJson),
    };
  }

  /**
   * Binds `listen` and starts accepting; `listen` then holds the real address.
   * Throws AddressError with Go's text (resolution or bind failure); the proxy
   * then stays disabled.
   */
  async start(): Promise<void> {
    if (this.server) return;
    const address = await resolveTcpAddress(this.listen);
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => {
      const connection = new Connection(
        client,
        this.upstream,
        () => this.toxics,
        this.log,
        () => this.connections.delete(connection),
      );
      this.connections.add(connection);
    });
    const listenOn = (host: string) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port: address.port }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    try {
      // Go listens dual-stack for an empty host and for 0.0.0.0, and reports
      // it as [::]:PORT (§3.1); without IPv6 it falls back to IPv4 as Go does.
      if (address.ip === undefined || address.ip === '0.0.0.0') {
        await listenOn('::').catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EAFNOSUPPORT' && error.code !== 'EADDRNOTAVAIL') throw error;
          return listenOn('0.0.0.0');
        });
      } else await listenOn(address.ip);
    } catch (error) {
      throw new AddressError(
        `listen tcp ${formatTcpAddress(address)}: ${bindErrorText(error as NodeJS.ErrnoException)}`,
      );
    }
    server.on('error', (error) => this.log.error({ err: error, proxy: this.name }, 'listener failed'));
    const bound = server.address() as AddressInfo;
    this.listen = joinHostPort(bound.address, bound.port);
    this.server = server;
    this.log.info({ proxy: this.name, listen: this.listen, upstream: this.upstream }, 'proxy started');
  }

  /** Closes the listener and every live connection (peers see a FIN, §4); toxics are kept. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const connection of this.connections) connection.destroy();
    this.connections.clear();
    await closed;
    this.log.info({ proxy: this.name }, 'proxy stopped');
  }

  /** Bytes held in memory by all live connections. */
  bufferedBytes(): number {
    let total = 0;
    for (const connection of this.connections) total += connection.bufferedBytes();
    return total;
  }

  /** The toxic called `name`, if any. */
  toxic(name: string): ToxicSpec | undefined {
    return this.toxicList.find((t) => t.name === name);
  }

  /** Adds a toxic at the end of its stream's chain, on every live connection too. */
  addToxic(spec: ToxicSpec): void {
    this.toxicList.push(spec);
    for (const connection of this.connections) connection.addToxic(spec);
  }

  /** Replaces a toxic of the same name and restarts it on every live connection. */
  updateToxic(spec: ToxicSpec): void {
    this.toxicList = this.toxicList.map((t) => (t.name === spec.name ? spec : t));
    for (const connection of this.connections) connection.updateToxic(spec);
  }

  /** Removes a toxic here and from every live connection. */
  removeToxic(spec: ToxicSpec): void {
    this.toxicList = this.toxicList.filter((t) => t.name !== spec.name);
    for (const connection of this.connections) connection.removeToxic(spec);
  }
}
