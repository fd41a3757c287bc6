// Typed gRPC clients for tests, in two styles over the same generated
// clients: calls that resolve to a Result (response or decoded failure),
// for tests that compare outcomes; and calls that reject, for tests that
// only expect success.
import * as grpc from '@grpc/grpc-js';
import {
  bearer,
  channelCredentials,
  fencing,
  remoteFailure,
  unaryCall,
  type AcquireResponse__Output,
  type AdvanceFenceRequest,
  type AdvanceFenceResponse__Output,
  type ClientTls,
  type CoordinatorClient,
  type DescribeResponse__Output,
  type GetFenceRequest,
  type GetFenceResponse__Output,
  type ReadRequest,
  type ReadResponse__Output,
  type ReleaseResponse__Output,
  type RemoteFailure,
  type RenewResponse__Output,
  type SinkClient,
  type WriteRequest,
  type WriteResponse__Output,
} from '@fencer/proto';

/** gRPC status codes by name. */
export const CODE = grpc.status;

/** A call's outcome as a value. */
export type Result<T> = { ok: true; value: T } | { ok: false; failure: RemoteFailure };

type UnaryMethod<Req, Res> = (
  req: Req,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (e: grpc.ServiceError | null, r?: Res) => void,
) => grpc.ClientUnaryCall;

/** Calls a unary method with a 10 s deadline; never throws for a gRPC error. */
export async function call<Req, Res>(
  client: grpc.Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  token?: string,
): Promise<Result<Res>> {
  try {
    return {
      ok: true,
      value: await unaryCall(client, method, request, {
        timeoutMs: 10_000,
        ...(token ? { metadata: bearer(token) } : {}),
      }),
    };
  } catch (error) {
    return { ok: false, failure: remoteFailure(error as grpc.ServiceError) };
  }
}

/** The value of an ok result; fails the test with the failure otherwise. */
export function ok<T>(result: Result<T>): T {
  if (!result.ok)
    throw new Error(
      `expected OK, got ${grpc.status[result.failure.code]} ${result.failure.reason}: ${result.failure.message}`,
    );
  return result.value;
}

/** The failure of a refused call; fails the test if it succeeded. */
export function refused<T>(result: Result<T>): RemoteFailure {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.value)}`);
  return result.failure;
}

/** Resolves with the failure a call ended in; throws if it succeeded. */
export async function failureOf(pending: Promise<unknown>): Promise<RemoteFailure> {
  try {
    await pending;
  } catch (error) {
    return remoteFailure(error as grpc.ServiceError);
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** A generated Coordinator client: plaintext, or TLS with `tls`. */
export function coordinatorClient(
  address: string,
  options: grpc.ClientOptions = {},
  tls?: ClientTls,
): CoordinatorClient {
  return new fencing.Coordinator(address, channelCredentials(tls), options);
}

/** A generated Sink client: plaintext, or TLS with `tls`. */
export function sinkClient(address: string, options: grpc.ClientOptions = {}, tls?: ClientTls): SinkClient {
  return new fencing.Sink(address, channelCredentials(tls), options);
}

/** Every Coordinator RPC as a Result-returning call, sending `token` as bearer credentials. */
export function coordinatorApi(client: CoordinatorClient, token?: string) {
  return {
    acquire: (r: { request_id: string; resource: string; owner_id: string; incarnation: string; ttl_ms: string }) =>
      call<typeof r, AcquireResponse__Output>(client, client.Acquire, r, token),
    renew: (r: { resource: string; owner_id: string; incarnation: string; token: string; ttl_ms: string }) =>
      call<typeof r, RenewResponse__Output>(client, client.Renew, r, token),
    release: (r: { resource: string; owner_id: string; incarnation: string; token: string }) =>
      call<typeof r, ReleaseResponse__Output>(client, client.Release, r, token),
    describe: (resource: string) =>
      call<{ resource: string }, DescribeResponse__Output>(client, client.Describe, { resource }, token),
  };
}

/** Sink Write (Result-returning) and GetFence (the fence, or a throw), sending `token` as bearer credentials. */
export function sinkApi(client: SinkClient, token?: string) {
  return {
    write: (resource: string, fenceToken: string, resultId: string, payload: string) =>
      call<object, WriteResponse__Output>(
        client,
        client.Write,
        { resource, token: fenceToken, result_id: resultId, payload: Buffer.from(payload) },
        token,
      ),
    fence: async (resource: string) =>
      ok(await call<object, GetFenceResponse__Output>(client, client.GetFence, { resource }, token)).fence,
  };
}

/**
 * Every Sink RPC as a promise that rejects with the grpc-js error; `token`
 * is sent as bearer credentials, each call has `timeoutMs` (default 10 s),
 * `channel` tunes the client (e.g. its reconnect backoff), and `tls` turns
 * TLS on.
 */
export function sinkCalls(
  address: string,
  token?: string,
  settings: { timeoutMs?: number; channel?: grpc.ClientOptions; tls?: ClientTls } = {},
) {
  const client = sinkClient(address, settings.channel, settings.tls);
  const options = () => ({
    metadata: token === undefined ? new grpc.Metadata() : bearer(token),
    timeoutMs: settings.timeoutMs ?? 10_000,
  });
  return {
    raw: client,
    advance: (request: AdvanceFenceRequest) =>
      unaryCall<AdvanceFenceRequest, AdvanceFenceResponse__Output>(client, client.AdvanceFence, request, options()),
    write: (request: WriteRequest) =>
      unaryCall<WriteRequest, WriteResponse__Output>(client, client.Write, request, options()),
    read: (resource: string, result_id: string) =>
      unaryCall<ReadRequest, ReadResponse__Output>(client, client.Read, { resource, result_id }, options()),
    getFence: (resource: string) =>
      unaryCall<GetFenceRequest, GetFenceResponse__Output>(client, client.GetFence, { resource }, options()),
    close: () => client.close(),
  };
}

/** What sinkCalls returns. */
export type SinkCalls = ReturnType<typeof sinkCalls>;

/** The outcome of a Write as a value: APPLIED/REPLAYED, or the failure's reason, with the fence. */
export async function writeOutcome(
  pending: Promise<WriteResponse__Output>,
): Promise<{ outcome: string; fence: string }> {
  try {
    const response = await pending;
    return { outcome: response.outcome, fence: response.fence };
  } catch (error) {
    const failure = remoteFailure(error as grpc.ServiceError);
    return { outcome: failure.reason || `code ${failure.code}`, fence: failure.metadata.fence ?? '' };
  }
}

/** Reads a result; undefined when RESULT_NOT_FOUND, throws on anything else. */
export async function readOrMissing(
  client: SinkCalls,
  resource: string,
  resultId: string,
): Promise<{ token: string; payload: Buffer } | undefined> {
  try {
    const { token, payload } = await client.read(resource, resultId);
    return { token, payload };
  } catch (error) {
    const failure = remoteFailure(error as grpc.ServiceError);
    if (failure.reason === 'RESULT_NOT_FOUND') return undefined;
    throw error;
  }
}
