// A6: every call of the protocol service is authenticated from its headers
// alone (bearer metadata, or the verified client certificate of its
// connection) before one byte of its request is read, inflated or decoded.
// One grpc-js server interceptor does it in front of every RPC, unary or
// streaming, so no handler can forget it.
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
import * as grpc from '@grpc/grpc-js';
import { rememberPrincipal, type Authenticator, type Principal } from './auth.js';
import type { Logger } from './log.js';
import { requestsRead, rpcCalls } from './metrics.js';
import { toStatus } from './unary.js';

/**
 * The interceptor that admits calls of `serviceName` (a fully qualified
 * name, e.g. fencing.v1.Sink) only once `authenticator` knows the caller
 * (refusing UNAUTHENTICATED otherwise, and counting the refusal like any
 * other call), and hands the principal to the handler (principalOf). Calls
 * of other services (health, reflection) pass untouched: load balancers and
 * tools call them without credentials.
 */
export function callGate(options: {
  serviceName: string;
  authenticator: Authenticator;
  log: Logger;
}): grpc.ServerInterceptor {
  const { serviceName, authenticator, log } = options;
  const prefix = `/${serviceName}/`;
  // The `service` label the service's unaryFactory counts under ('sink', 'coordinator').
  const service = serviceName.slice(serviceName.lastIndexOf('.') + 1).toLowerCase();
  return (methodDescriptor, call) => {
    if (!methodDescriptor.path.startsWith(prefix)) return new grpc.ServerInterceptingCall(call);
    const method = methodDescriptor.path.slice(prefix.length);
    const gated: grpc.ServerInterceptingCall = new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
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
          onReceiveMessage: (message, pass) => {
            requestsRead.inc({ service, method });
            pass(message);
          },
        }),
    });
    const refuse = (error: unknown): void => {
      const { code, details, metadata } = toStatus(error, method, log);
      rpcCalls.inc({ service, method, code: grpc.status[code] });
      gated.sendStatus({ code, details, metadata });
    };
    return gated;
  };
}
