// What a message stream's failures mean for the requests on it (the sink's
// WriteStream, the coordinator's LeaseStream): the stream fails as a whole,
// and every request still unanswered on it has an unknown fate; a caller's
// own deadline or abort ends only its own request, as it would a unary call.
import * as grpc from '@grpc/grpc-js';
import type { StreamFailure } from '@fencer/proto';
import { AuthError, FencerError, InternalError, UnavailableError, toFencerError, typedError } from './errors.js';

/** How one message is bounded, as a unary call is: a deadline and a signal. */
export interface MessageBounds {
  /** At most the stream's own timeout; a shorter one ends only this message. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
}

/**
 * A message's refusal when the server has no such stream (UNIMPLEMENTED: a
 * server of the shared contract alone): the message was not read, so the
 * same request goes as a unary call.
 */
export class StreamUnimplementedError extends InternalError {
  override name = 'StreamUnimplementedError';
}

/** A failure this library decided, without a status from the server. */
export function localFailure(code: grpc.status, message: string): FencerError {
  return typedError({ code, reason: '', metadata: {}, fieldViolations: [], message });
}

/**
 * A stream's failure as one unanswered request on it sees it: retryable
 * UnavailableError (it may or may not have taken effect; the retry is made
 * safe by the request's key: a result id, F3, or a request id, R4), except
 * for a stream refused for its credentials (AuthError: the server read none
 * of its messages, A6, and retrying cannot help).
 */
export function unansweredError(failed: StreamFailure, noun: string): FencerError {
  const error = toFencerError(Object.assign(new Error(failed.details), failed));
  if (error instanceof AuthError || error instanceof UnavailableError) return error;
  return new UnavailableError(
    {
      code: grpc.status.UNAVAILABLE,
      reason: '',
      metadata: { stream_code: grpc.status[error.code] ?? String(error.code), stream_reason: error.reason },
      fieldViolations: [],
      message: `the ${noun} stream failed before this ${noun} was answered: ${error.message}`,
    },
    true,
  );
}

/**
 * A stream's failure as one message on it sees it: StreamUnimplementedError
 * when the server has no such stream, else as unansweredError.
 */
export function messageFailure(failed: StreamFailure, noun: string): FencerError {
  if (failed.code === grpc.status.UNIMPLEMENTED)
    return new StreamUnimplementedError(
      { code: failed.code, reason: '', metadata: {}, fieldViolations: [], message: failed.details },
      false,
    );
  return unansweredError(failed, noun);
}

/**
 * Checks a message's bounds before it is sent, as unaryCall does: a message
 * cancelled, or out of time, before it was sent is never sent.
 */
export function refusedBeforeSending(bounds: MessageBounds | undefined): FencerError | undefined {
  if (bounds?.signal?.aborted) return localFailure(grpc.status.CANCELLED, 'cancelled before it was sent');
  if (bounds !== undefined && bounds.timeoutMs <= 0)
    return localFailure(grpc.status.DEADLINE_EXCEEDED, 'no time left to send it');
  return undefined;
}

/**
 * `answered`, or DEADLINE_EXCEEDED / CANCELLED first if the message's own
 * bounds end it; unchanged when they are no tighter than the stream's own
 * timeout (`streamTimeoutMs`), which the stream enforces itself.
 */
export function bounded<T>(
  answered: Promise<T>,
  bounds: MessageBounds | undefined,
  streamTimeoutMs: number,
): Promise<T> {
  if (bounds === undefined || (bounds.timeoutMs >= streamTimeoutMs && !bounds.signal)) return answered;
  return new Promise<T>((resolve, reject) => {
    const end = (error: FencerError) => {
      clearTimeout(timer);
      bounds.signal?.removeEventListener('abort', cancel);
      reject(error);
    };
    const cancel = () => end(localFailure(grpc.status.CANCELLED, 'cancelled by the caller'));
    const timer = setTimeout(
      () => end(localFailure(grpc.status.DEADLINE_EXCEEDED, `no answer within ${bounds.timeoutMs} ms`)),
      Math.max(0, bounds.timeoutMs),
    );
    bounds.signal?.addEventListener('abort', cancel, { once: true });
    answered.then(
      (value) => {
        clearTimeout(timer);
        bounds.signal?.removeEventListener('abort', cancel);
        resolve(value);
      },
      (error: FencerError) => end(error),
    );
  });
}
