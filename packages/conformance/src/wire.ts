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
  /** Shell commands that SIGKILL and start again every coordinator, or every sink (L7, R3, F6). */
  readonly restart: { readonly coordinator?: string; readonly sink?: string };
}

/** The clients of one run, one per address dialled; close() when done. */
export class Wire {
  readonly deployment: Deployment;
  readonly #credentials: grpc.ChannelCredentials;
  readonly #coordinators = new Map<string, CoordinatorClient>();
  readonly #sinks = new Map<string, SinkClient>();
  #current: string;

  constructor(deployment: Deployment) {
    this.deployment = deployment;
    this.#current = deployment.coordinators[0]!;
    this.#credentials = channelCredentials(deployment.tls);
  }

  /**
   * A Coordinator RPC as `caller`, at coordinator `index` if given, else as
   * an H7 client sends it: to the coordinator that last answered, and on
   * UNAVAILABLE to the leader a NOT_LEADER names, or else the next address.
   */
  async coordinator<Req, Res>(
    method: CoordinatorMethod,
    request: Req,
    caller: Caller | undefined,
    index?: number,
  ): Promise<Answer<Res>> {
    const addresses = this.deployment.coordinators;
    if (index !== undefined) return this.coordinatorAt<Req, Res>(addresses[index]!, method, request, caller);
    let address = this.#current;
    for (let tries = 0; ; tries++) {
      const answer = await this.coordinatorAt<Req, Res>(address, method, request, caller);
      if (answer.ok || answer.refusal.code !== grpc.status.UNAVAILABLE) {
        this.#current = address;
        return answer;
      }
      if (tries === addresses.length) return answer;
      const { errorInfo } = answer.refusal;
      const leader = errorInfo?.reason === 'NOT_LEADER' ? errorInfo.metadata.leader : undefined;
      address =
        leader !== undefined && leader !== address
          ? leader
          : addresses[(addresses.indexOf(address) + 1) % addresses.length]!;
    }
  }

  /** A Coordinator RPC at `address`, given or not (the leader a NOT_LEADER names, H7). */
  coordinatorAt<Req, Res>(
    address: string,
    method: CoordinatorMethod,
    request: Req,
    caller: Caller | undefined,
  ): Promise<Answer<Res>> {
    const client = this.#client(this.#coordinators, address, fencing.Coordinator);
    return this.#call(client, client[method] as never, request, caller);
  }

  /** A Sink RPC on the first sink (or `index`), as `caller`. */
  sink<Req, Res>(method: SinkMethod, request: Req, caller: Caller | undefined, index = 0): Promise<Answer<Res>> {
    const client = this.#sinkClient(index);
    return this.#call(client, client[method] as never, request, caller);
  }

  /**
   * One of the sink's message streams (this project's extensions) at sink
   * `index`: sends `messages` (see StreamMessages), half-closes, and
   * resolves with every response once the server ends the stream (or with
   * its refusal).
   */
  sinkStream<Req, Res>(
    method: SinkStreamMethod,
    messages: StreamMessages<Req, Res>,
    caller: Caller | undefined,
    index = 0,
  ): Promise<Answer<Res[]>> {
    return this.#stream(this.#sinkClient(index), method, messages, caller);
  }

  /**
   * One of the coordinator's message streams (this project's extensions), as
   * sinkStream, at the coordinator that last answered: a unary call before
   * it finds the leader (H7), since a standby refuses each message
   * NOT_LEADER and a stream does not follow it.
   */
  coordinatorStream<Req, Res>(
    method: CoordinatorStreamMethod,
    messages: StreamMessages<Req, Res>,
    caller: Caller | undefined,
  ): Promise<Answer<Res[]>> {
    return this.#stream(this.#client(this.#coordinators, this.#current, fencing.Coordinator), method, messages, caller);
  }

  /**
   * A unary call of `path` (/package.Service/Method) at `address` with
   * `bytes` as the request exactly as sent: the kit's own malformed messages
   * (V3), which no generated client would encode.
   */
  raw(address: string, path: string, bytes: Buffer, caller: Caller | undefined): Promise<Answer<Buffer>> {
    const client = this.#client(this.#sinks, address, fencing.Sink);
    const method = (
      request: Buffer,
      metadata: grpc.Metadata,
      options: grpc.CallOptions,
      callback: (error: grpc.ServiceError | null, response?: Buffer) => void,
    ) =>
      client.makeUnaryRequest(
        path,
        (value: Buffer) => value,
        (value: Buffer) => value,
        request,
        metadata,
        options,
        callback,
      );
    return this.#call(client, method as never, bytes, caller);
  }

  close(): void {
    for (const client of [...this.#coordinators.values(), ...this.#sinks.values()]) client.close();
  }

  #sinkClient(index: number): SinkClient {
    return this.#client(this.#sinks, this.deployment.sinks[index]!, fencing.Sink);
  }

  #client<C extends grpc.Client>(
    clients: Map<string, C>,
    address: string,
    Client: new (address: string, credentials: grpc.ChannelCredentials) => C,
  ): C {
    let client = clients.get(address);
    if (!client) clients.set(address, (client = new Client(address, this.#credentials)));
    return client;
  }

  #stream<Req, Res>(
    client: grpc.Client,
    method: SinkStreamMethod | CoordinatorStreamMethod,
    messages: StreamMessages<Req, Res>,
    caller: Caller | undefined,
  ): Promise<Answer<Res[]>> {
    const { first, next } = 'first' in messages ? messages : { first: messages, next: undefined };
    // The kit's messages are plain objects of the method's request type, as in #call.
    const open = (
      client as unknown as Record<
        typeof method,
        (metadata: grpc.Metadata, options: grpc.CallOptions) => grpc.ClientDuplexStream<Req, Res>
      >
    )[method].bind(client);
    const call = open(this.#metadata(caller), { deadline: Date.now() + this.deployment.timeoutMs });
    const responses: Res[] = [];
    let sent = 0;
    const send = (requests: readonly Req[]) => {
      for (const request of requests) call.write(request);
      sent += requests.length;
    };
    return new Promise((resolve) => {
      call.on('data', (response: Res) => {
        responses.push(response);
        if (next === undefined) return;
        send(next(response));
        // Every message sent is answered, so no answer can ask for more: half-close.
        if (responses.length >= sent) call.end();
      });
      call.on('error', (error: grpc.ServiceError) => resolve({ ok: false, refusal: refusalOf(error) }));
      call.on('status', ({ code }: grpc.StatusObject) => {
        if (code === grpc.status.OK) resolve({ ok: true, value: responses });
      });
      send(first);
      if (next === undefined) call.end();
    });
  }

  #metadata(caller: Caller | undefined): grpc.Metadata {
    return caller?.token === undefined ? new grpc.Metadata() : bearer(caller.token);
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
        metadata: this.#metadata(caller),
      });
      return { ok: true, value };
    } catch (error) {
      return { ok: false, refusal: refusalOf(error as grpc.ServiceError) };
    }
  }
}

export type CoordinatorMethod = 'Acquire' | 'Renew' | 'Release' | 'Describe' | 'ForceRelease';
export type SinkMethod = 'Write' | 'Read' | 'GetFence' | 'AdvanceFence' | 'ListResults';
/** The sink's message streams: this project's extensions. */
export type SinkStreamMethod = 'WriteStream' | 'AdvanceFenceStream';
/** The coordinator's message streams: this project's extensions. */
export type CoordinatorStreamMethod = 'LeaseStream';

/**
 * What the kit sends on a message stream: the messages, all at once; or
 * `first`, then what `next` gives for each response, for a message that
 * needs an earlier one's answer (a Renew names the token an Acquire was
 * answered with). The stream half-closes once the messages are sent, or
 * with `next` once every message sent has been answered. `next` only
 * chooses messages (it runs in the stream's event handler, so it must not
 * throw): the check judges the answers once the stream has ended.
 */
export type StreamMessages<Req, Res> =
  readonly Req[] | { readonly first: readonly Req[]; readonly next: (response: Res) => readonly Req[] };

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
