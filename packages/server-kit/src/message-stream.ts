// Bidi streams whose every message is a request of its own (the sink's
// WriteStream). The call gate authenticated the caller before the stream
// opened (A6); its role is checked once here, before any message is read
// (A4). Each message is then handled like a unary call and answered by one
// message. A refusal about the message (a Failure such as INVALID_FIELD,
// MALFORMED_MESSAGE or STALE_TOKEN) answers that message and ends nothing;
// a status about the service (STORAGE_UNAVAILABLE: its store failed, T3;
// UNAVAILABLE: it is stopping; INTERNAL: a bug) ends the stream, since every later message
// would meet it too.
//
// A7: a stream may outlive a reload of the credentials, so a message is
// handled only if the stream's own credential still names the caller it was
// opened as (reauthenticate); one that a reload removed or changed ends the
// stream UNAUTHENTICATED at its next message, which is not handled. While
// no reload has happened, the check costs one set lookup.
//
// V4: a stream stops being read while `window` of its messages are
// unanswered, an answer counting until the transport has taken it. grpc-js
// reads the HTTP/2 stream only as the handler consumes messages, so a client
// that sends faster than answers are decided, or does not read its answers,
// is held back by HTTP/2 flow control instead of being buffered for.
import * as grpc from '@grpc/grpc-js';
import type { Reason } from '@fencer/common';
import type { StatusDetails } from '@fencer/proto';
import { authorize, principalOf, reauthenticate, type Authenticator, type Role } from './auth.js';
import { RefusedMessage } from './call-gate.js';
import { Failure } from './failure.js';
import type { Logger } from './log.js';
import { inCarriedTrace } from './tracing.js';
import { rpcCallsByCode, rpcSeconds, streamMessagesInFlight } from './metrics.js';
import { asFailure, statusDetailsOf, toStatus, type CallContext, type UnaryHandler } from './unary.js';

/** How one stream message is answered. */
export interface MessageStreamHandler<Req, Res> {
  /** The answer to one message; throws a Failure to refuse it (anything else is INTERNAL and ends the stream). */
  readonly handle: UnaryHandler<Req, Res>;
  /** The answer that carries the refusal `status` of `request` (undefined: its bytes could not be decoded, V3). */
  readonly refuse: (request: Req | undefined, status: StatusDetails) => Res;
  /**
   * The trace context a message carries (see messageSpan), if its messages
   * carry one: each is then handled in a SERVER span of that trace, or of a
   * trace of its own when the caller does not trace (an empty context).
   */
  readonly traceContext?: (request: Req) => Readonly<Record<string, string>>;
  /** The name of a message's span (default "METHOD message"), e.g. by the call it carries. */
  readonly spanName?: (request: Req) => string;
}

/** Messages of one stream read but not yet answered before reading pauses (V4). */
export const DEFAULT_STREAM_WINDOW = 256;

/** Reasons that speak of the service, not of one message: they end the stream. */
const ENDS_STREAM = new Set<Reason>(['UNAVAILABLE', 'STORAGE_UNAVAILABLE', 'INTERNAL']);

/**
 * The open message streams of one server, so that stopping it winds them
 * down (startGrpcServer's `streams`) instead of waiting out its grace period
 * for streams that never end by themselves.
 */
export class OpenStreams {
  readonly #windDowns = new Set<() => void>();

  /** Registers one stream's wind-down; returns the function that unregisters it. */
  add(windDown: () => void): () => void {
    this.#windDowns.add(windDown);
    return () => void this.#windDowns.delete(windDown);
  }

  /** Every open stream stops reading, answers what it has read, and ends UNAVAILABLE. */
  windDown(): void {
    for (const windDown of [...this.#windDowns]) windDown();
  }
}

/**
 * Builds grpc-js bidi handlers sharing the role check, error mapping,
 * logging and metrics with unaryFactory: a refusal carries the status a
 * unary call would have ended with, and every message counts as one call in
 * the RPC metrics. `streams` collects the open streams for a stop to wind
 * down; `window` bounds each stream's unanswered messages; `authenticator`
 * is the server's (the one its call gate asks), against which each message
 * checks its stream's caller again (A7).
 */
export function messageStreamFactory(options: {
  service: string;
  log: Logger;
  streams: OpenStreams;
  authenticator: Authenticator;
  window?: number;
}) {
  const { service, log, streams, authenticator } = options;
  const window = options.window ?? DEFAULT_STREAM_WINDOW;
  return function messageStream<Req, Res>(
    method: string,
    roles: readonly Role[],
    handler: MessageStreamHandler<Req, Res>,
  ): grpc.handleBidiStreamingCall<Req | RefusedMessage, Res> {
    const labels = { service, method };
    const spanName = handler.spanName ?? (() => `${method} message`);
    const messagesInFlight = streamMessagesInFlight(service, method);
    const counted = rpcCallsByCode(service, method);
    return (call) => {
      // The stream has ended (its status sent) or was cancelled: nothing more is handled or sent.
      let over = false;
      let inFlight = 0;
      let halfClosed = false;
      let windingDown = false;
      let unregister = (): void => undefined;
      const close = () => {
        over = true;
        call.pause();
        messagesInFlight.value -= inFlight;
        inFlight = 0;
        unregister();
      };
      /** Ends the stream with the status of `error`; what was decided stays decided, and unanswered writes are the client's to retry. */
      const fail = (error: unknown) => {
        close();
        const status = toStatus(error, method, log);
        counted(status.code).value += 1;
        call.emit('error', status);
      };
      let context: CallContext;
      try {
        const principal = principalOf(call.metadata);
        authorize(principal, method, roles);
        context = { principal, log };
      } catch (error) {
        // Before any 'data' listener: not one message is read (A4 before V3).
        fail(error);
        return;
      }

      const finishIfDone = () => {
        if (over || inFlight > 0) return;
        if (halfClosed) {
          close();
          call.end();
        } else if (windingDown) {
          fail(new Failure('UNAVAILABLE', 'the server is stopping: open a new stream to a running one'));
        }
      };
      const flow = () => {
        if (inFlight >= window || windingDown) call.pause();
        else call.resume();
      };
      unregister = streams.add(() => {
        windingDown = true;
        flow();
        finishIfDone();
      });
      const taken = () => {
        if (over) return;
        inFlight -= 1;
        messagesInFlight.value -= 1;
        flow();
        finishIfDone();
      };
      const answer = (response: Res, code: grpc.status) => {
        counted(code).value += 1;
        if (!over) call.write(response, taken);
      };

      call.on('data', (message: Req | RefusedMessage) => {
        if (over) return;
        try {
          const principal = reauthenticate(authenticator, context.principal, call.metadata, call.getAuthContext());
          if (principal !== context.principal) context = { principal, log };
        } catch (error) {
          fail(error);
          return;
        }
        inFlight += 1;
        messagesInFlight.value += 1;
        flow();
        const stopTimer = rpcSeconds.startTimer(labels);
        const handled =
          message instanceof RefusedMessage
            ? Promise.reject(message.failure)
            : inCarriedTrace(spanName(message), handler.traceContext?.(message), async () =>
                handler.handle(message, context),
              );
        handled.then(
          (response) => {
            stopTimer();
            answer(response, grpc.status.OK);
          },
          (error: unknown) => {
            stopTimer();
            const failure = asFailure(error, method, log);
            if (ENDS_STREAM.has(failure.reason)) {
              if (!over) fail(failure);
              return;
            }
            const status = statusDetailsOf(failure);
            answer(handler.refuse(message instanceof RefusedMessage ? undefined : message, status), status.code);
          },
        );
      });
      call.on('end', () => {
        halfClosed = true;
        finishIfDone();
      });
      // grpc-js never calls back the writes of a cancelled call.
      call.on('cancelled', close);
    };
  };
}
