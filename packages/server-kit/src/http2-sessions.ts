// What grpc-js keeps to itself of each HTTP/2 connection. grpc-js (1.14)
// makes the Node HTTP/2 server behind a connection injector and exposes
// neither it nor its sessions: the settings it gives that server are the few
// it maps from its own options, and SETTINGS_MAX_HEADER_LIST_SIZE is not
// among them (so Node advertised none, and took header blocks of any size
// nghttp2 would decode). The server is reached here, in one place, through
// grpc-js's private map of its HTTP/2 servers (server.ts, http2Servers);
// start-up fails loudly if a grpc-js upgrade moves it.
//
// V4: a session the server ends with an error code was never logged. Node
// 20's nghttp2 (1.61) ends one, and Node then sends GOAWAY INTERNAL_ERROR,
// for PINGs or SETTINGS whose replies pile up unsent (past 1,000: the client
// does not read them, or sends a burst of them), a header block in too many
// CONTINUATION frames, or more than Node's 1,000 invalid frames; Node then
// destroys the socket with that error, before it closes, which guardSession
// reports. A rapid reset (streams opened and
// reset at once, CVE-2023-44487) nghttp2 answers by a GOAWAY of its own
// that nothing in JavaScript hears, and the connection stays open, idle,
// until a bound closes it; so the guard counts the client's resets itself,
// with nghttp2's rate and half its burst, so that it acts first: it ends the
// session with GOAWAY ENHANCE_YOUR_CALM and reports it.
import http2 from 'node:http2';
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

/** How the server ended a connection's HTTP/2 session with an error code (V4). */
export interface SessionError {
  /** The GOAWAY's error code, by name: ENHANCE_YOUR_CALM, INTERNAL_ERROR... */
  readonly code: string;
  /**
   * What the client did: rapid-reset, control-frame-flood (PINGs or SETTINGS
   * whose replies piled up unsent), continuation-flood, invalid-frame-flood,
   * or protocol-error for any other error nghttp2 found.
   */
  readonly kind: string;
  /** nghttp2's or Node's words for it. */
  readonly detail: string;
}

/** nghttp2.h: too many frames queued to send, replies the peer does not read. */
const NGHTTP2_ERR_FLOODED = -904;
/** nghttp2.h (1.61): a header block split into more CONTINUATION frames than allowed. */
const NGHTTP2_ERR_TOO_MANY_CONTINUATIONS = -905;

/**
 * nghttp2's defaults for the RST_STREAM frames a client may send: a burst of
 * 1,000, refilled at 33 a second. The guard allows half the burst.
 */
const RESET_BURST = 500;
const RESETS_PER_SECOND = 33;

/**
 * Calls `onError` once if the server ends `session` with an error code,
 * before its socket closes, and ends it itself (ENHANCE_YOUR_CALM) when its
 * client resets streams faster than RESET_BURST and RESETS_PER_SECOND allow.
 * A reset with code NO_ERROR is not seen (it looks like a clean end).
 */
export function guardSession(session: http2.ServerHttp2Session, onError: (error: SessionError) => void): void {
  let reported = false;
  const report = (error: SessionError) => {
    if (reported) return;
    reported = true;
    onError(error);
  };
  // Node's HTTP/2 errors (an NghttpError: a code ERR_HTTP2_..., and nghttp2's
  // negative errno) reach the socket as it is destroyed for them; a reset or
  // a shutdown of the server's own never carries one.
  session.socket.once('error', (error: NodeJS.ErrnoException) => {
    if (!error.code?.startsWith('ERR_HTTP2_') || typeof error.errno !== 'number' || error.errno >= 0) return;
    report({ code: 'INTERNAL_ERROR', kind: kindOf(error), detail: error.message });
  });
  let tokens = RESET_BURST;
  let refilledAt = performance.now();
  session.on('stream', (stream: http2.ServerHttp2Stream) =>
    stream.once('close', () => {
      // grpc-js never resets a stream, and Node's own resets carry NO_ERROR.
      if (stream.rstCode === http2.constants.NGHTTP2_NO_ERROR || session.destroyed) return;
      const now = performance.now();
      tokens = Math.min(RESET_BURST, tokens + ((now - refilledAt) / 1000) * RESETS_PER_SECOND);
      refilledAt = now;
      if (--tokens >= 0) return;
      const detail = `the client reset streams faster than ${RESETS_PER_SECOND} a second, past a burst of ${RESET_BURST}`;
      report({ code: 'ENHANCE_YOUR_CALM', kind: 'rapid-reset', detail });
      // The code goes in the GOAWAY; Node's typings take it only after an Error.
      session.destroy(new Error(detail), http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    }),
  );
}

function kindOf(error: NodeJS.ErrnoException): string {
  if (error.code === 'ERR_HTTP2_TOO_MANY_INVALID_FRAMES') return 'invalid-frame-flood';
  if (error.errno === NGHTTP2_ERR_FLOODED) return 'control-frame-flood';
  if (error.errno === NGHTTP2_ERR_TOO_MANY_CONTINUATIONS) return 'continuation-flood';
  return 'protocol-error';
}
