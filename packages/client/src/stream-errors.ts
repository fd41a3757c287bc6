// What a message stream's failures mean for the requests on it (the sink's
// WriteStream, the coordinator's LeaseStream): the stream fails as a whole,
// and every request still unanswered on it has an unknown fate.
import * as grpc from '@grpc/grpc-js';
import type { StreamFailure } from '@fencer/proto';
import { AuthError, FencerError, UnavailableError, toFencerError, typedError } from './errors.js';

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
