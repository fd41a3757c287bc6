// What grpc-js keeps to itself of each HTTP/2 connection. grpc-js (1.14)
// makes the Node HTTP/2 server behind a connection injector and exposes
// neither it nor its sessions: the settings it gives that server are the few
// it maps from its own options, and SETTINGS_MAX_HEADER_LIST_SIZE is not
// among them (so Node advertised none, and took header blocks of any size
// nghttp2 would decode). The server is reached here, in one place, through
// grpc-js's private map of its HTTP/2 servers (server.ts, http2Servers);
// start-up fails loudly if a grpc-js upgrade moves it.
import type http2 from 'node:http2';
import type * as grpc from '@grpc/grpc-js';

/**
 * Calls `onSession` with every HTTP/2 session of `server`'s one connection
 * injector (made by createConnectionInjector, before any connection is
 * injected), as Node creates it: for TLS, once the handshake is done.
 * Throws if `server` does not hold exactly one HTTP/2 server.
 */
export function onHttp2Sessions(server: grpc.Server, onSession: (session: http2.ServerHttp2Session) => void): void {
  const servers: unknown = Reflect.get(server, 'http2Servers');
  const [http2Server, ...others] = servers instanceof Map ? [...(servers.keys() as Iterable<unknown>)] : [];
  if (!isHttp2Server(http2Server) || others.length > 0)
    throw new Error(
      "grpc-js no longer keeps its HTTP/2 server where server-kit expects it (Server's http2Servers): see http2-sessions.ts",
    );
  http2Server.on('session', onSession);
}

function isHttp2Server(value: unknown): value is http2.Http2Server | http2.Http2SecureServer {
  return typeof value === 'object' && value !== null && 'on' in value && 'listenerCount' in value;
}
