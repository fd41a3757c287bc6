// The sink's WriteStream as one long-lived object: `write()` sends one Write
// as one message and resolves with its own answer, matched by (resource,
// result_id), with the very receipt and typed errors a unary Write gives.
// Answers arrive as the sink decides them, in any order across resources.
// It is where SinkConnection.write sends by default: at concurrency 1 a
// message takes 0.3–0.4 ms less than a unary call, which pays for a new
// HTTP/2 stream, its headers and trailers each time (issue 23).
//
// Failure semantics, what makes retrying safe: when the stream itself fails
// (the link drops, the sink stops or its store fails, an answer is overdue
// past the call timeout, or the sink answers a write it was not sent), the
// stream is cancelled and every write still unanswered on it rejects with
// UnavailableError: it may or may not have landed, and sending it again with
// the same result id is REPLAYED if it did (F3), which is what FencedWriter
// does. The next write opens a new stream. Only a stream refused for its
// credentials (UNAUTHENTICATED, PERMISSION_DENIED) rejects its writes with
// AuthError instead: the sink read none of them (A6), and retrying cannot
// help.
import * as grpc from '@grpc/grpc-js';
import {
  MessageStream,
  messageSpan,
  pairKey,
  remoteFailureOfStatus,
  type StreamFailure,
  type WriteRequest,
  type WriteStreamRequest,
  type WriteStreamResponse__Output,
} from '@fencer/proto';
import { typedError, type FencerError } from './errors.js';
import { bounded, localFailure, messageFailure, refusedBeforeSending, type MessageBounds } from './stream-errors.js';
import type { CallObserver, WriteReceipt } from './calls.js';

/** One Write, as FencedWriter and SinkConnection.write take it. */
export interface WriteFields {
  readonly resource: string;
  readonly token: bigint;
  readonly resultId: string;
  readonly payload: Uint8Array;
}

/** What a SinkWriteStream needs from its connection. */
export interface WriteStreamSettings {
  /** Opens one WriteStream call (with the connection's credentials). */
  readonly open: () => grpc.ClientDuplexStream<WriteStreamRequest, WriteStreamResponse__Output>;
  /** How long a write may wait for its answer before the stream counts as broken. */
  readonly timeoutMs: number;
  /** The connection's channel: leaving READY (a GOAWAY) moves the stream to a new call (MessageStreamSettings). */
  readonly channel?: grpc.ChannelInterface;
  readonly observer?: CallObserver | undefined;
}

/** The receipt a write's answer carries, or the typed error of its refusal. */
function receiptOf(answer: WriteStreamResponse__Output): WriteReceipt {
  if (answer.written) {
    return {
      outcome: answer.written.outcome === 'REPLAYED' ? 'replayed' : 'applied',
      fence: BigInt(answer.written.fence),
    };
  }
  if (answer.refused) throw typedError(remoteFailureOfStatus(answer.refused));
  throw localFailure(grpc.status.INTERNAL, 'the sink answered a write with neither a receipt nor a refusal');
}

/**
 * A connection's WriteStream, opened on the first write and again on the
 * first write after a failure (see the file comment for what a failure does
 * to pending writes). Writes of different (resource, result_id) pairs go out
 * at once; a write of a pair still in flight waits for that one's answer, so
 * that no answer can be matched to the wrong one. Each write waits at most
 * the connection's call timeout for its answer. Writes go out as they come:
 * the caller bounds how many it has in flight (FencedWriter awaits each),
 * as the sink bounds what it reads (V4). Get it from
 * SinkConnection.writeStream(); the connection's close() closes it.
 */
export class SinkWriteStream {
  readonly #settings: WriteStreamSettings;
  readonly #stream: MessageStream<WriteStreamRequest, WriteStreamResponse__Output>;
  #closed = false;

  constructor(settings: WriteStreamSettings) {
    this.#settings = settings;
    this.#stream = new MessageStream({
      open: settings.open,
      timeoutMs: settings.timeoutMs,
      ...(settings.channel ? { channel: settings.channel } : {}),
      keyOfAnswer: (answer) => pairKey(answer.resource, answer.result_id),
      noun: 'write',
    });
  }

  /**
   * Write (F1–F3) as one message of the stream: the receipt, or the typed
   * error a unary Write would reject with (LeaseLostError, ResultConflictError,
   * InvalidRequestError, AuthError...), or UnavailableError when the stream
   * failed first, or StreamUnimplementedError, having taken effect nowhere,
   * when the sink has no WriteStream. `bounds` shorter than the stream's
   * timeout, or an abort, end only this write (DEADLINE_EXCEEDED,
   * CANCELLED), as they would a unary Write; the sink may still decide it.
   * Prefer FencedWriter, or SinkConnection.write, which sends here.
   */
  write(request: WriteFields, bounds?: MessageBounds): Promise<WriteReceipt> {
    return this.#send(pairKey(request.resource, request.resultId), request, bounds);
  }

  /** Half-closes the stream (the sink answers what it has) and refuses later writes. */
  close(): void {
    this.#closed = true;
    this.#stream.end();
  }

  #send(key: string, request: WriteFields, bounds: MessageBounds | undefined): Promise<WriteReceipt> {
    const wire: WriteRequest = {
      resource: request.resource,
      token: request.token.toString(),
      result_id: request.resultId,
      payload: Buffer.from(request.payload),
    };
    const observed = this.#settings.observer?.({ method: 'Write', request: wire, streamed: true });
    const refused = this.#closed
      ? // A caller's bug, not a fault to retry through.
        localFailure(grpc.status.INTERNAL, 'write on a closed write stream (its connection was closed)')
      : refusedBeforeSending(bounds);
    const answered = refused
      ? Promise.reject(refused)
      : bounded(
          // A traced caller's write joins its trace, as its unary Write would through the grpc-js instrumentation.
          messageSpan('WriteStream Write', (carrier) =>
            this.#stream.send(key, { write: wire, trace_context: carrier }),
          ).then(receiptOf, (failed: StreamFailure) => {
            throw messageFailure(failed, 'write');
          }),
          bounds,
          this.#settings.timeoutMs,
        );
    return answered.then(
      (receipt) => {
        observed?.({ ok: true, response: { outcome: receipt.outcome.toUpperCase(), fence: receipt.fence.toString() } });
        return receipt;
      },
      (error: FencerError) => {
        observed?.({ ok: false, error });
        throw error;
      },
    );
  }
}
