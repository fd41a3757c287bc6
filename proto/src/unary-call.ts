// The promise form of a grpc-js unary call, with the two ways a caller ends
// one early: a deadline (grpc-js enforces it, DEADLINE_EXCEEDED) and an
// AbortSignal (CANCELLED), so worker code can cancel the way it cancels
// anything else.
import * as grpc from '@grpc/grpc-js';

/** A grpc-js unary client method, as generated for every RPC. */
export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: Res) => void,
) => grpc.ClientUnaryCall;

/** How one unaryCall is sent and when it is given up. */
export interface UnaryCallOptions {
  metadata?: grpc.Metadata;
  /** Deadline in milliseconds from now; no deadline when absent. */
  timeoutMs?: number;
  /**
   * Cancels the call (status CANCELLED) when aborted; with an already
   * aborted signal the call is never sent and rejects CANCELLED. The listener
   * is removed once the call settles, so one long-lived signal can serve any
   * number of calls.
   */
  signal?: AbortSignal;
}

/**
 * Calls one unary method and resolves with its response or rejects with the
 * grpc-js ServiceError (read it with `remoteFailure`).
 * Usage: `unaryCall(client, client.Write, request, { timeoutMs: 2000 })`.
 */
export function unaryCall<Req, Res>(
  client: grpc.Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  options: UnaryCallOptions = {},
): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    if (options.signal?.aborted) {
      // Cancelling a call just started does not stop grpc-js from sending it,
      // and a Write sent is a Write that may be applied: do not start it.
      const details = 'cancelled before it was sent';
      reject(
        Object.assign(new Error(`${grpc.status.CANCELLED} CANCELLED: ${details}`), {
          code: grpc.status.CANCELLED,
          details,
          metadata: new grpc.Metadata(),
        }),
      );
      return;
    }
    const callOptions: grpc.CallOptions = {};
    // grpc-js deadlines are wall-clock dates; only the call's own bound uses one.
    if (options.timeoutMs !== undefined) callOptions.deadline = Date.now() + options.timeoutMs;
    const { signal } = options;
    const cancel = () => call.cancel();
    const call = method.call(
      client,
      request,
      options.metadata ?? new grpc.Metadata(),
      callOptions,
      (error, response) => {
        signal?.removeEventListener('abort', cancel);
        if (error) reject(error);
        else resolve(response as Res);
      },
    );
    signal?.addEventListener('abort', cancel, { once: true });
  });
}

/** Metadata carrying `authorization: Bearer <token>` (A2). */
export function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}
