// A6: every call of the protocol service is authenticated from its headers
// alone (bearer metadata, or the verified client certificate of its
// connection) before one byte of its request is read, inflated or decoded;
// then (V3) each request message is decoded strictly. One grpc-js server
// interceptor does both in front of every RPC, unary or streaming, so no
// handler can forget either.
//
// Why ending the call on metadata is enough (grpc-js 1.14,
// src/server-interceptors.ts): BaseServerInterceptingCall pauses the HTTP/2
// stream as the call is created, and frames are split, inflated
// (decompressMessage) and deserialized only in its 'data' handler, which
// runs once startRead() resumes the stream. Only the handler calls
// startRead() (handleUnary and the streaming handlers, from their own
// onReceiveMetadata), and the handler sees metadata only when every
// interceptor has passed it on. The gate's onReceiveMetadata runs
// synchronously in call.start(), as the stream arrives; a refusal there
// sends a trailers-only status and never passes the metadata on, so nothing
// calls startRead(). grpc-js then drains the stream into a 'data' handler
// that drops every frame of an ended call (checkCancelled) unread.
//
// A6, V4: a call whose metadata is past the server's bound is answered
// RESOURCE_EXHAUSTED METADATA_TOO_LARGE before anything else is looked at:
// its headers are all an unauthenticated caller may cost, and they are
// bounded (HTTP/2 refuses a header block past twice the bound before any
// call exists, connection-limits.ts).
//
// V4: the gate also bounds the protocol calls open at once on one
// connection, answering the next RESOURCE_EXHAUSTED TOO_MANY_STREAMS before
// its credentials are even looked at. HTTP/2's own stream bound
// (connection-limits.ts) sits above it as the backstop for streams the gate
// never sees (health watches) and refuses with a bare REFUSED_STREAM, which
// no client can tell from a network failure. A call leaves the count when
// grpc-js reports it over (onCancel: it fires once for every end, a sent
// status, a client's cancel, a reset or a lost connection).
//
// V2, V4: a request message larger than the server's bound after
// decompression is answered RESOURCE_EXHAUSTED MESSAGE_TOO_LARGE by the gate,
// before it is decoded. grpc-js's own bound (server.ts) sits at twice it as
// the backstop: a message past that is refused by grpc-js itself, from its
// frame header or while inflating it (BaseServerInterceptingCall's
// StreamDecoder and decompressMessage), with a status it sends straight to
// the stream, which no interceptor sees and which carries no reason. So a
// reason can be given only to messages grpc-js has already read, and the
// backstop has to sit above the gate's bound: one message costs at most
// twice the bound in memory, never an unbounded amount.
//
// A stream of requests (WriteStream) is not ended by one malformed or
// oversize message: gRPC's own framing is intact, so the next message can
// still be read. The gate hands the handler a RefusedMessage in its place,
// which the handler refuses alone (message-stream.ts).
import * as grpc from '@grpc/grpc-js';
import { descriptors } from '@fencer/proto';
import { rememberPrincipal, type Authenticator, type Principal } from './auth.js';
import { RepeatLimiter, type Logger } from './log.js';
import { requestsRead, rpcCalls, rpcCallsOpen, serviceLabel } from './metrics.js';
import { toStatus } from './unary.js';
import { Failure } from './failure.js';
import { decodeStrictly } from './wire-check.js';

/**
 * What a streaming handler receives instead of a request message the gate
 * refused unread: its bytes are not a valid encoding of its type (V3), or
 * more than the message bound (V2, V4). Nothing of it was decoded, so it
 * names no request; `failure` is the refusal (MALFORMED_MESSAGE naming the
 * field and the fault, or MESSAGE_TOO_LARGE with the `limit`).
 */
export class RefusedMessage {
  constructor(readonly failure: Failure) {}
}

/** The warning logged, once per offender and minute, for each limit the gate answers (V4). */
const WARNINGS = {
  METADATA_TOO_LARGE: "a call's metadata was larger than allowed; refusing it before its credentials (A6, V4)",
  TOO_MANY_STREAMS: 'a connection opened more calls at once than allowed; refusing the excess (V4)',
  MESSAGE_TOO_LARGE: 'a request was larger than allowed after decompression; refusing it unread (V4)',
} as const;

/** The gate of one protocol service, and that service as the gate needs it served. */
export interface CallGate {
  /** For `new grpc.Server({ interceptors })`. */
  readonly interceptor: grpc.ServerInterceptor;
  /** The definition to add: grpc-js hands requests over as bytes, which the gate decodes (V3). */
  readonly definition: grpc.ServiceDefinition;
}

/**
 * Admits calls of `serviceName` (fully qualified, e.g. fencing.v1.Sink;
 * `definition` is proto-loader's) only once `authenticator` knows the caller
 * (refusing UNAUTHENTICATED otherwise), and hands the principal to the
 * handler (principalOf). Each request message must then be a valid encoding
 * of its type (else INVALID_ARGUMENT, MALFORMED_MESSAGE) before proto-loader's
 * decoder turns it into the object handlers get, and at most
 * `maxMessageBytes` long (else RESOURCE_EXHAUSTED, MESSAGE_TOO_LARGE); a
 * streaming method gets a RefusedMessage instead, and the stream goes on. Refusals count like any
 * other call. A call whose metadata is past `maxMetadataBytes` is refused
 * first (RESOURCE_EXHAUSTED, METADATA_TOO_LARGE), and at most
 * `maxCallsPerConnection` calls of the service are open at once on one
 * connection (V4). Calls of other services (health,
 * reflection) pass untouched, only reported to `onCall`: load balancers
 * and tools call them without credentials.
 */
export function callGate(options: {
  serviceName: string;
  definition: grpc.ServiceDefinition;
  authenticator: Authenticator;
  maxCallsPerConnection: number;
  maxMetadataBytes: number;
  maxMessageBytes: number;
  /** Told of every call, of any service, with its connection's peer: one interceptor layer serves both. */
  onCall?: (peer: string) => void;
  log: Logger;
}): CallGate {
  const { serviceName, authenticator, maxMetadataBytes, maxMessageBytes, log } = options;
  const open = new CallsPerConnection(options.maxCallsPerConnection);
  // V4: one warning per offending client host, limit and minute, whatever it sends.
  const offenders = new RepeatLimiter({ windowMs: 60_000, maxKeysPerWindow: 20 });
  const service = descriptors.getService(serviceName);
  if (!service) throw new Error(`no descriptor for ${serviceName}`);
  const decoders = new Map(
    Object.values(options.definition).map((method) => {
      const schema = service.methods.find((m) => method.path === `/${serviceName}/${m.name}`)?.input;
      if (!schema) throw new Error(`no descriptor for ${method.path}`);
      return [method.path, { schema, decode: method.requestDeserialize }] as const;
    }),
  );
  const definition = Object.fromEntries(
    Object.entries(options.definition).map(([name, method]) => [
      name,
      { ...method, requestDeserialize: (bytes: Buffer) => bytes },
    ]),
  );
  const prefix = `/${serviceName}/`;
  // The label the service's unaryFactory counts under ('sink', 'coordinator').
  const label = serviceLabel(serviceName);
  const callsOpen = rpcCallsOpen(label);
  /** Logs `reason` for `peer`'s host unless it was logged within the minute; `heldBack` counts what was not. */
  const warnOffender = (peer: string, method: string, reason: keyof typeof WARNINGS, limit: number, size?: number) => {
    const host = peer.slice(0, peer.lastIndexOf(':'));
    const admitted = offenders.admit(`${reason} ${host}`);
    if (admitted.log) log.warn({ peer, method, reason, limit, size, heldBack: admitted.heldBack }, WARNINGS[reason]);
  };
  const interceptor: grpc.ServerInterceptor = (methodDescriptor, call) => {
    const connection = call.getPeer();
    options.onCall?.(connection);
    const decoder = decoders.get(methodDescriptor.path);
    if (!decoder) return new grpc.ServerInterceptingCall(call);
    const method = methodDescriptor.path.slice(prefix.length);
    let counted = false;
    const gated: grpc.ServerInterceptingCall = new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const metadataBytes = headerListBytes(metadata);
            if (metadataBytes > maxMetadataBytes) {
              warnOffender(connection, method, 'METADATA_TOO_LARGE', maxMetadataBytes, metadataBytes);
              refuse(
                new Failure(
                  'METADATA_TOO_LARGE',
                  `the call's metadata is ${metadataBytes} bytes; this server takes at most ${maxMetadataBytes}`,
                  { limit: String(maxMetadataBytes) },
                ),
              );
              return;
            }
            if (!open.enter(connection)) {
              tooManyStreams(connection, method);
              return;
            }
            counted = true;
            callsOpen.value += 1;
            let principal: Principal;
            try {
              principal = authenticator.authenticate(metadata, call.getAuthContext());
            } catch (error) {
              refuse(error);
              return;
            }
            rememberPrincipal(metadata, principal);
            pass(metadata);
          },
          onReceiveMessage: (bytes: Buffer, pass) => {
            requestsRead(label, method).value += 1;
            let request: unknown;
            try {
              if (bytes.length > maxMessageBytes) {
                warnOffender(connection, method, 'MESSAGE_TOO_LARGE', maxMessageBytes, bytes.length);
                throw new Failure(
                  'MESSAGE_TOO_LARGE',
                  `the request is ${bytes.length} bytes after decompression; this server reads at most ${maxMessageBytes}`,
                  { limit: String(maxMessageBytes) },
                );
              }
              request = decodeStrictly(decoder.schema, bytes, decoder.decode);
            } catch (error) {
              if (methodDescriptor.requestStream && error instanceof Failure) pass(new RefusedMessage(error));
              else refuse(error);
              return;
            }
            pass(request);
          },
          onCancel: () => {
            if (!counted) return;
            open.leave(connection);
            callsOpen.value -= 1;
            counted = false;
          },
        }),
    });
    const refuse = (error: unknown): void => {
      const { code, details, metadata } = toStatus(error, method, log);
      rpcCalls(label, method, grpc.status[code]).value += 1;
      gated.sendStatus({ code, details, metadata });
    };
    const tooManyStreams = (peer: string, method: string): void => {
      warnOffender(peer, method, 'TOO_MANY_STREAMS', open.limit);
      refuse(
        new Failure(
          'TOO_MANY_STREAMS',
          `this connection already has ${open.limit} calls open; wait for one to end (V4)`,
          { limit: String(open.limit) },
        ),
      );
    };
    return gated;
  };
  return { interceptor, definition };
}

/**
 * `metadata`'s size as HTTP/2 counts a header list: name, value and 32 bytes
 * per entry, a binary value as the base64 it travelled as.
 */
function headerListBytes(metadata: grpc.Metadata): number {
  let bytes = 0;
  for (const [name, values] of Object.entries(metadata.toJSON()))
    for (const value of values)
      bytes += name.length + 32 + (typeof value === 'string' ? value.length : Math.ceil(value.length / 3) * 4);
  return bytes;
}

/** Calls open per connection (grpc-js peer address), bounded; a connection with none takes no memory. */
class CallsPerConnection {
  readonly #open = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Counts a call in, unless `connection` already has `limit` open. */
  enter(connection: string): boolean {
    const count = this.#open.get(connection) ?? 0;
    if (count >= this.limit) return false;
    this.#open.set(connection, count + 1);
    return true;
  }

  leave(connection: string): void {
    const count = (this.#open.get(connection) ?? 1) - 1;
    if (count > 0) this.#open.set(connection, count);
    else this.#open.delete(connection);
  }
}
