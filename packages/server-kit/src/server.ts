// Server start-up shared by both services: the protocol service behind the
// call gate (A6), plus the standard health and reflection services, bound to
// one address (port 0 picks a free port, reported back), and a graceful stop.
// While it serves, the process holds the bound on the memory calls leave
// outside V8's heap (A6, memory-bound.ts).
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check';
import { LOADER_OPTIONS, reflectionFiles } from '@fencer/proto';
import { joinHostPort, listenAddress, type ServerTls } from '@fencer/cli-kit';
import type { Authenticator } from './auth.js';
import { callGate } from './call-gate.js';
import { DEFAULT_CONNECTION_LIMITS, grpcServerOptions, type ConnectionLimits } from './connection-limits.js';
import { guardSession, onHttp2Sessions } from './http2-sessions.js';
import { ConnectionListener } from './listener.js';
import { holdMemoryBound } from './memory-bound.js';
import { addReflection } from './reflection.js';
import { serviceLabel } from './metrics.js';
import type { Logger } from './log.js';
import type { OpenStreams } from './message-stream.js';

const HEALTH_SERVICE = 'grpc.health.v1.Health';

/** What startGrpcServer serves, and where. */
export interface ServerSpec {
  /** Fully qualified service name, e.g. fencing.v1.Sink (health reports it). */
  readonly serviceName: string;
  /** HOST:PORT to bind; port 0 picks a free one. */
  readonly listen: string;
  /** The protocol service's definition (proto-loader's) and handlers. */
  readonly definition: grpc.ServiceDefinition;
  readonly handlers: grpc.UntypedServiceImplementation;
  /** Who may call the protocol service (A2); asked before any request is read (A6). */
  readonly authenticator: Authenticator;
  /** TLS, and mutual TLS when it names a client CA (A2); absent or null: plaintext. */
  readonly tls?: ServerTls | null;
  /**
   * Largest request, after decompression (V2): above the payload limit, so
   * an oversize payload gets INVALID_ARGUMENT, but bounded (a few MiB), since
   * a compressed request can claim any size. The call gate answers a larger
   * one RESOURCE_EXHAUSTED MESSAGE_TOO_LARGE. grpc-js's own bound is twice
   * this: it refuses a message past that from its frame header, or stops
   * inflating it (1.14, decompressMessage), with a RESOURCE_EXHAUSTED of its
   * own that carries no reason (call-gate.ts says why no reason can be added).
   */
  readonly maxReceiveMessageBytes: number;
  /** The message streams the handlers open (messageStreamFactory): a stop winds them down first. */
  readonly streams?: OpenStreams;
  /** V4: streams, buffered bytes and lifetime of one connection; default DEFAULT_CONNECTION_LIMITS. */
  readonly connectionLimits?: ConnectionLimits;
  /**
   * Whether health reports `serviceName` SERVING once bound (default true).
   * A coordinator replica starts false and follows its leadership through
   * setServing (H2); the server as a whole ('') is SERVING once bound either way.
   */
  readonly serving?: boolean;
  /**
   * Server interceptors placed outside the call gate, nearest the transport,
   * so they see every status the server sends, the gate's refusals included;
   * default none. A programmatic seam only: no flag reaches it, and only a
   * deliberately broken variant (the chaos suite's negative controls) passes one.
   */
  readonly interceptors?: readonly grpc.ServerInterceptor[];
  readonly log: Logger;
}

/** A bound, serving server. */
export interface RunningServer {
  /** HOST:PORT actually bound (the real port when 0 was asked for). */
  readonly address: string;
  /**
   * Reports NOT_SERVING (health watchers get it, then their stream ends),
   * winds down message streams (each ends UNAVAILABLE once its read
   * messages are answered), stops taking calls, lets running ones finish for up to `graceMs`, then
   * cancels them. A second call with a shorter grace can force a slow stop.
   */
  stop(graceMs?: number): Promise<void>;
  /** Reports the protocol service SERVING or NOT_SERVING to health checks and watchers; ignored once stopping. */
  setServing(serving: boolean): void;
}

/**
 * Starts `spec.serviceName` with health (SERVING once bound) and reflection.
 * Rejects with StartupError when the address is malformed or cannot be
 * bound, leaving nothing open.
 */
export async function startGrpcServer(spec: ServerSpec): Promise<RunningServer> {
  const { host, port: requestedPort } = listenAddress('listen', spec.listen);
  const limits = spec.connectionLimits ?? DEFAULT_CONNECTION_LIMITS;
  const gate = callGate({
    ...spec,
    maxCallsPerConnection: limits.maxConcurrentStreams,
    maxMetadataBytes: limits.maxMetadataBytes,
    maxMessageBytes: spec.maxReceiveMessageBytes,
    // Called only once serving, by which time the listener below exists.
    onCall: (peer) => listener.noteCall(peer),
  });
  const server = new grpc.Server({
    // Nothing reads channelz here; its per-call trackers cost the
    // coordinator ~13 % of its CPU per Acquire+Release (issue 23, A/B).
    'grpc.enable_channelz': 0,
    'grpc.max_receive_message_length': 2 * spec.maxReceiveMessageBytes,
    ...grpcServerOptions(limits),
    // grpc-js wraps the call in these in order: the first is nearest the transport.
    interceptors: [...(spec.interceptors ?? []), gate.interceptor],
  });
  server.addService(gate.definition, spec.handlers);
  const health = new HealthImplementation({ '': 'NOT_SERVING', [spec.serviceName]: 'NOT_SERVING' });
  // A health Watch stream never ends by itself, and a graceful shutdown waits
  // for every open call: without ending them, one load balancer watching
  // would hold every stop for its whole grace period and then be cancelled.
  const watches = new Set<grpc.ServerWritableStream<unknown, unknown>>();
  health.addToServer({
    addService: (service: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation) => {
      const watch = implementation.watch as grpc.handleServerStreamingCall<unknown, unknown>;
      server.addService(service, {
        ...implementation,
        watch: (call: grpc.ServerWritableStream<unknown, unknown>) => {
          watches.add(call);
          call.once('cancelled', () => watches.delete(call));
          watch(call);
        },
      });
    },
  });
  // Reflect exactly what this server serves: its own service and health,
  // not the other fencing.v1 service that shares the files; plus the
  // google.rpc error details, so tools can decode our statuses. The files
  // are the real ones (reflectionFiles), not proto-loader's synthetic ones.
  addReflection(server, { ...reflectionFiles, ...protoLoader.loadSync(healthProtoPath, LOADER_OPTIONS) }, [
    spec.serviceName,
    HEALTH_SERVICE,
  ]);

  // The same bound as a plaintext socket that never sends the preface: one ping, unanswered.
  const injector = server.createConnectionInjector(
    serverCredentials(spec.tls ?? null, limits.keepaliveMs + limits.keepaliveTimeoutMs),
  );
  onHttp2Sessions(server, (session) => {
    // A6: HTTP/2's bound on a header block, above the gate's METADATA_TOO_LARGE. Node applies it once
    // the client acknowledges these settings, which every HTTP/2 stack does on receiving them.
    session.settings({ maxHeaderListSize: 2 * limits.maxMetadataBytes });
    // V4. The listener names connections as grpc-js names a call's peer; sessions come only once it listens.
    const peer = `${session.socket.remoteAddress}:${session.socket.remotePort}`;
    guardSession(session, (error) => listener.noteSessionError(peer, error));
  });
  let listener: ConnectionListener;
  try {
    listener = await ConnectionListener.listen({
      host,
      port: requestedPort,
      injector,
      bounds: limits,
      log: spec.log,
      service: serviceLabel(spec.serviceName),
    });
  } catch (error) {
    server.forceShutdown();
    throw error;
  }
  const releaseMemoryBound = holdMemoryBound(spec.log);
  let stopping = false;
  const setServing = (serving: boolean) => {
    if (!stopping) health.setStatus(spec.serviceName, serving ? 'SERVING' : 'NOT_SERVING');
  };
  health.setStatus('', 'SERVING');
  setServing(spec.serving ?? true);
  const address = joinHostPort(host, listener.port);
  spec.log.info({ address, tls: !spec.tls ? 'off' : spec.tls.clientCa ? 'mutual' : 'on' }, 'listening');

  return {
    address,
    setServing,
    stop: (graceMs = 5_000) =>
      new Promise<void>((resolve) => {
        stopping = true;
        health.setStatus('', 'NOT_SERVING');
        health.setStatus(spec.serviceName, 'NOT_SERVING');
        for (const call of watches) call.end();
        watches.clear();
        // Like health watches, write streams never end by themselves: each
        // answers what it has read, then ends UNAVAILABLE so its client
        // reconnects, rather than holding the stop for its whole grace.
        spec.streams?.windDown();
        listener.close();
        const force = setTimeout(() => {
          server.forceShutdown();
          releaseMemoryBound();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          releaseMemoryBound();
          resolve();
        });
      }),
  };
}

/**
 * With a client CA the handshake itself refuses a client without a
 * certificate that CA signed (unexpired): such a caller never reaches a
 * handler, so the certificate a handler sees has been verified.
 */
function serverCredentials(tls: ServerTls | null, handshakeTimeoutMs: number): grpc.ServerCredentials {
  return tls ? new BoundedTlsCredentials(tls, handshakeTimeoutMs) : grpc.ServerCredentials.createInsecure();
}

/**
 * grpc-js's createSsl with a bound on the TLS handshake (V4): grpc-js hands
 * these constructor options to Node's http2.createSecureServer, whose
 * default handshakeTimeout lets a socket that never finishes its handshake
 * hold a descriptor for 120 s. Before the handshake there is no HTTP/2
 * session, so the keepalive pings that close a silent plaintext socket
 * cannot reach it.
 */
class BoundedTlsCredentials extends grpc.ServerCredentials {
  constructor(tls: ServerTls, handshakeTimeoutMs: number) {
    super(
      {
        requestCert: tls.clientCa !== null,
        handshakeTimeout: handshakeTimeoutMs,
        // grpc-js's own default for createSsl: the operator's cipher list, if any.
        ...(process.env.GRPC_SSL_CIPHER_SUITES ? { ciphers: process.env.GRPC_SSL_CIPHER_SUITES } : {}),
      },
      { ...(tls.clientCa ? { ca: tls.clientCa } : {}), cert: tls.cert, key: tls.key },
    );
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }
}
