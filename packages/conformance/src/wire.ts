// The kit's view of a deployment: raw fencing.v1 clients from the .proto
// the kit ships (no reflection), one call at a time, every refusal read as
// an implementation in any language would send it: the gRPC code, the
// google.rpc.ErrorInfo in the status details, and the `fencing-reason`
// trailer, kept apart so the error model itself can be checked.
import * as grpc from '@grpc/grpc-js';
import {
  bearer,
  channelCredentials,
  decodeStatusDetails,
  fencing,
  REASON_KEY,
  STATUS_DETAILS_KEY,
  unaryCall,
  type ClientTls,
  type CoordinatorClient,
  type ErrorInfo,
  type FieldViolation,
  type SinkClient,
} from '@fencer/proto';

/** A refusal as it came over the wire. */
export interface Refusal {
  readonly code: grpc.status;
  /** google.rpc.ErrorInfo from grpc-status-details-bin, if any. */
  readonly errorInfo: ErrorInfo | undefined;
  /** The `fencing-reason` trailer, if any. */
  readonly trailer: string | undefined;
  readonly fieldViolations: readonly FieldViolation[];
  readonly message: string;
}

/** An answer or a refusal. */
export type Answer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly refusal: Refusal };

/** Who the kit calls as: a bearer token per role it found, or none against --insecure services. */
export interface Callers {
  readonly workers: readonly [Caller, Caller];
  readonly admin: Caller | undefined;
  /** The coordinator's own identity, for AdvanceFence (the sink's A2). */
  readonly coordinator: Caller | undefined;
}

/** One identity: its owner id on the wire and its token (undefined: no credentials sent). */
export interface Caller {
  readonly identity: string;
  readonly token: string | undefined;
}

/** The deployment under test. */
export interface Deployment {
  readonly coordinators: readonly string[];
  readonly sinks: readonly string[];
  readonly tls: ClientTls | undefined;
  readonly callers: Callers;
  /** Each call's deadline, ms. */
  readonly timeoutMs: number;
}

/** The clients of one run; close() when done. */
export class Wire {
  readonly deployment: Deployment;
  readonly #coordinators: CoordinatorClient[];
  readonly #sinks: SinkClient[];

  constructor(deployment: Deployment) {
    this.deployment = deployment;
    const credentials = channelCredentials(deployment.tls);
    this.#coordinators = deployment.coordinators.map((address) => new fencing.Coordinator(address, credentials));
    this.#sinks = deployment.sinks.map((address) => new fencing.Sink(address, credentials));
  }

  /** A Coordinator RPC on the first coordinator (or `index`), as `caller`. */
  coordinator<Req, Res>(
    method: 'Acquire' | 'Renew' | 'Release' | 'Describe',
    request: Req,
    caller: Caller | undefined,
    index = 0,
  ): Promise<Answer<Res>> {
    const client = this.#coordinators[index]!;
    return this.#call(client, client[method] as never, request, caller);
  }

  /** A Sink RPC on the first sink (or `index`), as `caller`. */
  sink<Req, Res>(
    method: 'Write' | 'Read' | 'GetFence' | 'AdvanceFence',
    request: Req,
    caller: Caller | undefined,
    index = 0,
  ): Promise<Answer<Res>> {
    const client = this.#sinks[index]!;
    return this.#call(client, client[method] as never, request, caller);
  }

  close(): void {
    for (const client of [...this.#coordinators, ...this.#sinks]) client.close();
  }

  async #call<Req, Res>(
    client: grpc.Client,
    method: never,
    request: Req,
    caller: Caller | undefined,
  ): Promise<Answer<Res>> {
    try {
      const value = await unaryCall<Req, Res>(client, method, request, {
        timeoutMs: this.deployment.timeoutMs,
        ...(caller?.token === undefined ? {} : { metadata: bearer(caller.token) }),
      });
      return { ok: true, value };
    } catch (error) {
      return { ok: false, refusal: refusalOf(error as grpc.ServiceError) };
    }
  }
}

function refusalOf(error: grpc.ServiceError): Refusal {
  const trailer = error.metadata?.get(REASON_KEY)[0];
  const bin = error.metadata?.get(STATUS_DETAILS_KEY)[0];
  let details: ReturnType<typeof decodeStatusDetails> | undefined;
  if (bin instanceof Buffer) {
    try {
      details = decodeStatusDetails(bin);
    } catch {
      details = undefined;
    }
  }
  return {
    code: error.code,
    errorInfo: details?.errorInfo,
    trailer: typeof trailer === 'string' ? trailer : undefined,
    fieldViolations: details?.fieldViolations ?? [],
    message: error.details ?? '',
  };
}
