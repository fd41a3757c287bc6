// The one place where handler results become gRPC statuses: the role check
// (A4) on the principal the call gate authenticated, then the handler; a Failure becomes its code with ErrorInfo/BadRequest
// details and the `fencing-reason` trailer; anything else becomes INTERNAL
// with a bare message, the stack going to the log only.
import * as grpc from '@grpc/grpc-js';
import { ERROR_DOMAIN, REASON_KEY, STATUS_DETAILS_KEY, encodeStatusDetails, type StatusDetails } from '@fencer/proto';
import { REASON_CODES, StoreFailedError } from '@fencer/common';
import { AnswerPacer } from './answer-pacer.js';
import { authorize, principalOf, type Principal, type Role } from './auth.js';
import { Failure } from './failure.js';
import type { Logger } from './log.js';
import { rpcCallsByCode, rpcSeconds } from './metrics.js';

/** What a handler knows about its call besides the request. */
export interface CallContext {
  readonly principal: Principal;
  readonly log: Logger;
}

/** A protocol handler: resolves with the response or throws a Failure (anything else is INTERNAL). */
export type UnaryHandler<Req, Res> = (request: Req, context: CallContext) => Promise<Res>;

/**
 * Builds grpc-js unary handlers that share the role check, error mapping,
 * logging and metrics, for a service served by startGrpcServer (whose call
 * gate authenticates every caller before its request is read, A6).
 * `unary(method, roles, handle)` admits only `roles` (A4; every role when
 * auth is off) and never lets an exception escape as anything but a status.
 * Answers ready in one turn leave a few per turn (AnswerPacer).
 */
export function unaryFactory(options: { service: string; log: Logger }) {
  const { service, log } = options;
  // One pacer for all of the service's unary calls: a group commit readies
  // the answers of calls of every method at once.
  const pacer = new AnswerPacer();
  return function unary<Req, Res>(
    method: string,
    roles: readonly Role[],
    handle: UnaryHandler<Req, Res>,
  ): grpc.handleUnaryCall<Req, Res> {
    const counted = rpcCallsByCode(service, method);
    return (call, callback) => {
      const stopTimer = rpcSeconds.startTimer({ service, method });
      const run = async (): Promise<Res> => {
        const principal = principalOf(call.metadata);
        authorize(principal, method, roles);
        return handle(call.request, { principal, log });
      };
      // Only the sending is paced: the answer is decided (and durable, F6) by now.
      const answer = (code: grpc.status, send: () => void) =>
        pacer.send(() => {
          stopTimer();
          counted(code).value += 1;
          send();
        });
      run().then(
        (response) => answer(grpc.status.OK, () => callback(null, response)),
        (error: unknown) => {
          const status = toStatus(error, method, log);
          answer(status.code, () => callback(status));
        },
      );
    };
  };
}

/** Maps a thrown value to a status: a Failure keeps its reason, anything else is a bare INTERNAL (logged). */
export function toStatus(error: unknown, method: string, log: Logger): grpc.ServiceError {
  const failure = asFailure(error, method, log);
  const status = statusDetailsOf(failure);
  const metadata = new grpc.Metadata();
  metadata.set(REASON_KEY, failure.reason);
  metadata.set(STATUS_DETAILS_KEY, encodeStatusDetails(status));
  return Object.assign(new Error(failure.message), { code: status.code, details: failure.message, metadata });
}

/**
 * A thrown value as a Failure: itself; STORAGE_UNAVAILABLE for a failed
 * store (T3: the service is stopping, and the call may be retried once it is
 * back; the cause is logged once, where the store failed); or a bare
 * INTERNAL whose cause and stack go to the log only.
 */
export function asFailure(error: unknown, method: string, log: Logger): Failure {
  if (error instanceof Failure) return error;
  if (error instanceof StoreFailedError)
    return new Failure(
      'STORAGE_UNAVAILABLE',
      'storage failed: this service stopped its writes; retry once it is back (T3)',
    );
  log.error({ err: error, method }, 'handler failed');
  return new Failure('INTERNAL', 'internal error');
}

/** A Failure as a google.rpc.Status: its code, message, ErrorInfo (domain fencing.v1) and BadRequest. */
export function statusDetailsOf(failure: Failure): StatusDetails {
  return {
    code: REASON_CODES[failure.reason],
    message: failure.message,
    errorInfo: { reason: failure.reason, domain: ERROR_DOMAIN, metadata: { ...failure.metadata } },
    fieldViolations: [...failure.fieldViolations],
  };
}
