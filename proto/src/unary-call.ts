import * as grpc from '@grpc/grpc-js';

/** A grpc-js unary client method, as generated for every RPC. */
type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: Res) => void,
) => grpc.ClientUnaryCall;

export interface UnaryCallOptions {
  metadata?: grpc.Metadata;
  /** Milliseconds from now; no deadline when absent. */
  timeoutMs?: number;
  /** Cancels the call (status CANCELLED) when aborted. */
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
    const callOptions: grpc.CallOptions = {};
    if (options.timeoutMs !== undefined) callOptions.deadline = new Date(Date.now() + options.timeoutMs);
    const call = method.call(client, request, options.metadata ?? new grpc.Metadata(), callOptions, (error, response) =>
      error ? reject(error) : resolve(response as Res),
    );
    options.signal?.addEventListener('abort', () => call.cancel(), { once: true });
  });
}

/** Metadata carrying `authorization: Bearer <token>` (A2). */
export function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}
