// One proxied client connection (TOXIPROXY-API.md §3.2): a dial to the
// upstream for each accepted client, then two links, upstream (client →
// server) and downstream (server → client).
import { connect, type Socket } from 'node:net';
import type { Logger } from '@fencer/server-kit';
import { splitGoHostPort } from './go-net.js';
import { Link, type LinkOwner } from './link.js';
import type { Direction, ToxicSpec } from './toxic-spec.js';
import type { CloseKind } from './toxics/stage.js';

/** A client connection and its upstream; it closes itself when both sockets are gone. */
export class Connection implements LinkOwner {
  private server: Socket | undefined;
  private links: { upstream: Link; downstream: Link } | undefined;
  private resetOnClose = false;
  private destroyed = false;

  /**
   * Dials `upstream` (resolved again at every dial, §3.2) for `client`, which
   * must be paused. A failed dial closes the client with a FIN; `onClosed` runs
   * once both sockets are closed.
   */
  constructor(
    private readonly client: Socket,
    upstream: string,
    toxics: () => readonly ToxicSpec[],
    readonly log: Logger,
    onClosed: () => void,
  ) {
    client.on('error', (error) => log.debug({ err: error }, 'client socket error'));
    let target: { host: string; port: number };
    try {
      const { host, port } = splitGoHostPort(upstream);
      target = { host: host === '' ? 'localhost' : host, port: Number(port) };
      if (!/^\d+$/.test(port) || target.port > 65_535) throw new Error(`bad upstream port in ${upstream}`);
    } catch (error) {
      log.warn({ err: error, upstream }, 'cannot dial upstream');
      client.destroy();
      client.once('close', onClosed);
      return;
    }
    const server = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    this.server = server;
    server.pause();
    // A proxy must not add Nagle's delay to small writes (gRPC frames): Go,
    // and so the real Toxiproxy, turns it off on every TCP connection.
    client.setNoDelay(true);
    server.setNoDelay(true);
    let closedSockets = 0;
    const onSocketClosed = () => {
      closedSockets += 1;
      if (closedSockets === 2) onClosed();
    };
    client.once('close', onSocketClosed);
    server.once('close', onSocketClosed);
    server.on('error', (error) => {
      log.debug({ err: error, upstream }, 'upstream socket error');
      // §3.2: a refused dial closes the client at once, with a FIN.
      if (!this.links) client.destroy();
    });
    server.once('connect', () => {
      if (this.destroyed) return;
      const all = toxics();
      // §6.5: SO_LINGER=0 is set only if a reset_peer toxic is there at accept.
      this.resetOnClose = all.some((t) => t.type === 'reset_peer');
      const upstreamLink = new Link(client, server, this);
      const downstreamLink = new Link(server, client, this);
      this.links = { upstream: upstreamLink, downstream: downstreamLink };
      upstreamLink.start(all.filter((t) => t.direction === 'upstream'));
      downstreamLink.start(all.filter((t) => t.direction === 'downstream'));
    });
  }

  /** Bytes held in memory for this connection, both directions. */
  bufferedBytes(): number {
    return this.links ? this.links.upstream.bufferedBytes() + this.links.downstream.bufferedBytes() : 0;
  }

  /** Attaches a new toxic to the live link of its direction. */
  addToxic(spec: ToxicSpec): void {
    this.link(spec.direction)?.addToxic(spec);
  }

  /** Restarts an updated toxic on the live link of its direction. */
  updateToxic(spec: ToxicSpec): void {
    this.link(spec.direction)?.updateToxic(spec);
  }

  /** Removes a toxic from the live link of its direction. */
  removeToxic(spec: ToxicSpec): void {
    this.link(spec.direction)?.removeToxic(spec.name);
  }

  /** Closes both sockets now (proxy disabled, deleted or stopped): peers see a FIN. */
  destroy(): void {
    this.destroyed = true;
    this.links?.upstream.abort();
    this.links?.downstream.abort();
    this.client.destroy();
    this.server?.destroy();
  }

  /** LinkOwner: a reset with SO_LINGER=0 sends RST both ways; anything else ends the link with a FIN. */
  closeByToxic(link: Link, kind: CloseKind): void {
    if (kind === 'reset' && this.resetOnClose) {
      this.links?.upstream.abort();
      this.links?.downstream.abort();
      this.client.resetAndDestroy();
      this.server?.resetAndDestroy();
      return;
    }
    link.close();
  }

  private link(direction: Direction): Link | undefined {
    return this.links?.[direction];
  }
}
