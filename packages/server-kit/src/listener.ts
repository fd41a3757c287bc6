// V4: the server's own listening socket, its connections handed to grpc-js
// through a connection injector. grpc-js closes silent, idle and over-age
// connections below any handler and says nothing about it, and accepts as
// many as arrive: 2,100 silent sockets used up the process's descriptors
// (which LevelDB needs too) and locked every other client out, without a
// log line. Owning the socket bounds the connections held, in all and per
// client host, and puts the server's refusals and closures in the log,
// those for HTTP/2 floods included (told by http2-sessions.ts).
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { joinHostPort, StartupError } from '@fencer/cli-kit';
import type { SessionError } from './http2-sessions.js';
import { RepeatLimiter, type Logger } from './log.js';
import { connectionsClosed, connectionsOpen, connectionsRefused, http2SessionErrors } from './metrics.js';

/** How many connections a listener holds at once. */
export interface ListenerBounds {
  /** In all: past it a new connection is closed as it arrives. */
  readonly maxConnections: number;
  /** From one client address, so that one host cannot take every place. */
  readonly maxConnectionsPerHost: number;
  /** A server-side close at or past this age is the age bound's (logged as such). */
  readonly maxConnectionAgeMs: number;
}

interface ListenOptions {
  readonly host: string;
  readonly port: number;
  readonly injector: grpc.ConnectionInjector;
  readonly bounds: ListenerBounds;
  readonly log: Logger;
  /** The label of its metrics ('sink', 'coordinator'). */
  readonly service: string;
}

interface Connection {
  readonly host: string;
  readonly openedAt: number;
  calls: number;
  /** The client sent its FIN before the server ended its side: the close is the client's. */
  peerEndedFirst: boolean;
  /** Set when the server ends its HTTP/2 session with an error: its close is the server's, and already logged. */
  sessionError?: SessionError;
}

const NOTICES = {
  'max-connections': 'refused a connection: --max-connections reached (V4)',
  'max-connections-per-host': 'refused a connection: --max-connections-per-host reached for its host (V4)',
  silent: 'closed a connection that made no call: it stayed silent, or its TLS handshake never finished (V4)',
  aged: 'closed a connection at --max-connection-age-ms (V4)',
  'http2-error': "closed a connection for its client's HTTP/2 flood or protocol error, with a GOAWAY error code (V4)",
} as const;

/** A bound listening socket feeding one grpc-js server. */
export class ConnectionListener {
  readonly #server = net.createServer({ noDelay: true }, (socket) => this.#accept(socket));
  readonly #injector: grpc.ConnectionInjector;
  readonly #bounds: ListenerBounds;
  readonly #log: Logger;
  readonly #service: string;
  /** By grpc-js's peer string (`address:port`), which calls report. */
  readonly #connections = new Map<string, Connection>();
  readonly #perHost = new Map<string, number>();
  // One line per notice, client host and minute, however many connections it opens.
  readonly #notices = new RepeatLimiter({ windowMs: 60_000, maxKeysPerWindow: 20 });

  private constructor(options: ListenOptions) {
    this.#injector = options.injector;
    this.#bounds = options.bounds;
    this.#log = options.log;
    this.#service = options.service;
  }

  /**
   * Binds `host:port` (port 0 picks a free one) and feeds what connects to
   * `injector`; rejects with StartupError if the address cannot be bound.
   */
  static async listen(options: ListenOptions): Promise<ConnectionListener> {
    const listener = new ConnectionListener(options);
    const server = listener.#server;
    const { host, port } = options;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(new StartupError(`cannot listen on ${joinHostPort(host, port)}: ${error.message}`)),
      );
      server.listen({ host, port }, () => resolve());
    });
    server.on('error', (error) => options.log.error({ err: error }, 'listening socket failed'));
    return listener;
  }

  /** The bound port. */
  get port(): number {
    return (this.#server.address() as net.AddressInfo).port;
  }

  /** Counts a call (protocol, health, reflection) of connection `peer` toward its "made a call". */
  noteCall(peer: string): void {
    const connection = this.#connections.get(peer);
    if (connection) connection.calls++;
  }

  /**
   * Counts and logs (once per client host, kind and minute) that the server
   * is ending connection `peer`'s HTTP/2 session with `error`; its close,
   * which follows, is then the server's.
   */
  noteSessionError(peer: string, error: SessionError): void {
    const connection = this.#connections.get(peer);
    if (!connection) return;
    connection.sessionError = error;
    http2SessionErrors.inc({ service: this.#service, kind: error.kind, code: error.code });
    this.#notice('warn', 'http2-error', connection.host, {
      peer,
      ...error,
      ageMs: Math.round(performance.now() - connection.openedAt),
      calls: connection.calls,
    });
  }

  /** Stops accepting; connections already open are grpc-js's to wind down. */
  close(): void {
    this.#server.close();
  }

  #accept(socket: net.Socket): void {
    const host = socket.remoteAddress ?? 'unknown';
    const fromHost = this.#perHost.get(host) ?? 0;
    const limit =
      this.#connections.size >= this.#bounds.maxConnections
        ? 'max-connections'
        : fromHost >= this.#bounds.maxConnectionsPerHost
          ? 'max-connections-per-host'
          : undefined;
    if (limit) {
      socket.destroy();
      connectionsRefused.inc({ service: this.#service, limit });
      const bound = limit === 'max-connections' ? this.#bounds.maxConnections : this.#bounds.maxConnectionsPerHost;
      this.#notice('warn', limit, host, { limit: bound, open: this.#connections.size, fromHost });
      return;
    }
    // grpc-js names a call's peer the same way (server-interceptors getPeer).
    const peer = `${host}:${socket.remotePort}`;
    const connection: Connection = { host, openedAt: performance.now(), calls: 0, peerEndedFirst: false };
    this.#connections.set(peer, connection);
    this.#perHost.set(host, fromHost + 1);
    connectionsOpen.inc({ service: this.#service });
    // Node ends an HTTP/2 session's socket the server closes (keepalive, idle, age) with a FIN and
    // destroys it a turn later; a busy server can read the client's answering FIN in between, and
    // that close is still the server's.
    socket.once('end', () => (connection.peerEndedFirst = !socket.writableEnded));
    socket.once('close', (hadError) => this.#closed(peer, connection, hadError));
    this.#injector.injectConnection(socket);
  }

  #closed(peer: string, connection: Connection, hadError: boolean): void {
    this.#connections.delete(peer);
    const left = (this.#perHost.get(connection.host) ?? 1) - 1;
    if (left > 0) this.#perHost.set(connection.host, left);
    else this.#perHost.delete(connection.host);
    connectionsOpen.dec({ service: this.#service });
    // A FIN or a reset from the client ends it on the client's side; otherwise the server closed it
    // (a session the server ended with an error destroys the socket with that error).
    const closedBy = connection.sessionError || !(connection.peerEndedFirst || hadError) ? 'server' : 'client';
    connectionsClosed.inc({ service: this.#service, closed_by: closedBy, made_calls: String(connection.calls > 0) });
    const fields = { peer, ageMs: Math.round(performance.now() - connection.openedAt), calls: connection.calls };
    if (connection.sessionError) this.#log.debug({ ...fields, closedBy }, 'connection closed');
    else if (closedBy === 'server' && connection.calls === 0) this.#notice('info', 'silent', connection.host, fields);
    else if (closedBy === 'server' && fields.ageMs >= this.#bounds.maxConnectionAgeMs)
      this.#notice('info', 'aged', connection.host, fields);
    else this.#log.debug({ ...fields, closedBy }, 'connection closed');
  }

  #notice(
    level: 'info' | 'warn',
    notice: keyof typeof NOTICES,
    host: string,
    fields: { kind?: string } & Record<string, unknown>,
  ): void {
    // Each kind of a notice (an HTTP/2 error's) is its own line.
    const admitted = this.#notices.admit(`${notice} ${fields.kind ?? ''} ${host}`);
    if (admitted.log) this.#log[level]({ host, ...fields, heldBack: admitted.heldBack }, NOTICES[notice]);
  }
}
