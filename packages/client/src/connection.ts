// One connection to each service, as a worker uses it: the bearer token on
// every call (A2), TLS when asked for, a deadline on every call, errors
// typed once (toFencerError), tokens as bigint, and an optional observer
// that sees every call go out and come back (what the chaos suite records).
// A coordinator connection may name several replicas (H7): LeaderRouter
// picks which one each call goes to.
import * as grpc from '@grpc/grpc-js';
import {
  bearer,
  channelCredentials,
  fencing,
  unaryCall,
  type CoordinatorClient,
  type Lease__Output,
  type SinkClient,
  type DescribeRequest,
  type DescribeResponse__Output,
  type WriteRequest,
  type WriteResponse__Output,
  type ReadRequest,
  type ReadResponse__Output,
  type GetFenceRequest,
  type GetFenceResponse__Output,
  type ClientTls,
} from '@fencer/proto';
import type { CallMethod, CallObserver, WriteReceipt } from './calls.js';
import { toFencerError } from './errors.js';
import { LeaseStream, type LeaseCalls } from './lease-stream.js';
import { LeaderRouter } from './replicas.js';
import { StreamUnimplementedError } from './stream-errors.js';
import { SinkWriteStream, type WriteFields } from './write-stream.js';

/** TLS for a connection: the CA that signed the server's certificate, and a client certificate when the server asks for one. */
export type TlsOptions = ClientTls;

/** Where a connection goes and how. */
export interface ConnectionOptions {
  /** HOST:PORT of the service (or of the proxy in front of it). */
  readonly address: string;
  /** Bearer token sent as `authorization: Bearer <token>` on every call (A2); absent for a sink or coordinator run with `--insecure`. */
  readonly token?: string;
  /** TLS; absent: plaintext. */
  readonly tls?: TlsOptions;
  /** Deadline of each call in ms unless the caller gives a shorter one (default 2,000). */
  readonly callTimeoutMs?: number;
  readonly observer?: CallObserver;
  /** Extra grpc-js channel options, over this library's defaults. */
  readonly channelOptions?: grpc.ChannelOptions;
}

/** How one call is bounded: a deadline shorter than the connection's, and a signal that cancels it. */
export interface CallOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

// grpc-js backs off reconnecting for up to 120 s by default: a worker whose
// link was cut for a second would then sit out two minutes of its lease.
const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = Object.freeze({
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
});

const DEFAULT_CALL_TIMEOUT_MS = 2_000;

type Method<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: Res) => void,
) => grpc.ClientUnaryCall;

type ClientClass<Client> = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options: grpc.ChannelOptions,
) => Client;

/** What both connections share: the channels, the token, the deadline, the observer. */
abstract class Connection<Client extends grpc.Client> {
  readonly #Client: ClientClass<Client>;
  readonly #address: string;
  readonly #options: Omit<ConnectionOptions, 'address'>;
  /** One channel per address, opened on its first call and kept until close(). */
  readonly #clients = new Map<string, Client>();

  protected constructor(Client: ClientClass<Client>, address: string, options: Omit<ConnectionOptions, 'address'>) {
    this.#Client = Client;
    this.#address = address;
    this.#options = options;
    this.clientAt(address);
  }

  /** HOST:PORT that calls go to now (for a coordinator over several replicas: the one believed to lead). */
  get address(): string {
    return this.#address;
  }

  /** The channel to `address`, opened now if it is the first call there. */
  protected clientAt(address: string): Client {
    let client = this.#clients.get(address);
    if (client === undefined) {
      client = new this.#Client(address, channelCredentials(this.#options.tls), {
        ...DEFAULT_CHANNEL_OPTIONS,
        ...this.#options.channelOptions,
      });
      this.#clients.set(address, client);
    }
    return client;
  }

  /** The channel to `address` (the service's one address, for a sink). */
  protected get client(): Client {
    return this.clientAt(this.address);
  }

  /** The deadline of each call, in ms. */
  protected get callTimeoutMs(): number {
    return this.#options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  /** What every call sends: the bearer token, when there is one (A2). */
  protected metadata(): grpc.Metadata {
    return this.#options.token === undefined ? new grpc.Metadata() : bearer(this.#options.token);
  }

  protected get observer(): CallObserver | undefined {
    return this.#options.observer;
  }

  /** Sends one call; rejects with a FencerError, never a raw grpc-js error. */
  protected call<Req extends object, Res extends object>(
    name: CallMethod,
    method: (client: Client) => Method<Req, Res>,
    request: Req,
    options: CallOptions,
  ): Promise<Res> {
    return this.send(this.address, name, method, request, options);
  }

  /** Sends one call to `address`, bounded by the connection's deadline and the caller's. */
  protected async send<Req extends object, Res extends object>(
    address: string,
    name: CallMethod,
    method: (client: Client) => Method<Req, Res>,
    request: Req,
    options: CallOptions,
  ): Promise<Res> {
    const timeoutMs = Math.min(options.timeoutMs ?? Infinity, this.callTimeoutMs);
    const settled = this.observer?.({ method: name, request, address });
    try {
      const client = this.clientAt(address);
      const response = await unaryCall(client, method(client), request, {
        metadata: this.metadata(),
        timeoutMs: Math.max(0, timeoutMs),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      settled?.({ ok: true, response });
      return response;
    } catch (raw) {
      const error = toFencerError(raw);
      settled?.({ ok: false, error });
      throw error;
    }
  }

  /** Closes every channel; calls in flight fail CANCELLED. */
  close(): void {
    for (const client of this.#clients.values()) client.close();
  }
}

/** A granted or renewed lease, tokens as bigint. */
/** A sink as a grant names it (Lease.sink, P3). */
export interface SinkRef {
  readonly name: string;
  /** HOST:PORT as the coordinator reaches it. */
  readonly address: string;
}

export interface LeaseGrant {
  readonly resource: string;
  readonly ownerId: string;
  readonly incarnation: bigint;
  readonly token: bigint;
  readonly ttlMs: number;
  /** How long the lease runs on as the coordinator saw it when it answered; 0 for a replayed grant that has ended (R1). */
  readonly remainingMs: number;
  /** The sink that owns the resource, where the holder writes (P3); absent from a coordinator that does not say. */
  readonly sink?: SinkRef;
}

/** Who asks for a lease: PROTOCOL.md's (owner_id, incarnation). */
export interface LeaseIdentity {
  readonly resource: string;
  readonly ownerId: string;
  readonly incarnation: bigint;
}

/**
 * Where a coordinator connection goes: one `address`, or the addresses of
 * all its replicas (`coordinators`, H7), in the order to try them.
 */
export type CoordinatorConnectionOptions = Omit<ConnectionOptions, 'address'> & {
  /**
   * Acquire, Renew and Release as messages of one LeaseStream per replica
   * (this project's extension; see LeaseStream), or, false, as unary calls.
   * Default true; a replica that answers the stream UNIMPLEMENTED gets unary
   * calls from then on either way.
   */
  readonly leaseStream?: boolean;
} & (
    | { readonly address: string; readonly coordinators?: undefined }
    | { readonly coordinators: readonly string[]; readonly address?: undefined }
  );

/** The Coordinator's four RPCs, typed, sent to the replica that leads (H7: see LeaderRouter). */
export class CoordinatorConnection extends Connection<CoordinatorClient> {
  readonly #router: LeaderRouter;
  readonly #streamed: boolean;
  /** Per replica, opened on its first streamed call. */
  readonly #leaseStreams = new Map<string, LeaseStream>();
  /** Replicas that answered LeaseStream UNIMPLEMENTED: unary calls there from then on. */
  readonly #unaryOnly = new Set<string>();

  /** Throws RangeError for an empty list of coordinators or an address listed twice. */
  constructor(options: CoordinatorConnectionOptions) {
    const router = new LeaderRouter(options.coordinators ?? [options.address]);
    super(fencing.Coordinator, router.leader, options);
    this.#router = router;
    this.#streamed = options.leaseStream ?? true;
  }

  /** The configured replicas, in order. */
  get coordinators(): readonly string[] {
    return this.#router.coordinators;
  }

  /** The replica the next call goes to first: the last one that answered, or that a NOT_LEADER named. */
  override get address(): string {
    return this.#router.leader;
  }

  protected override call<Req extends object, Res extends object>(
    name: CallMethod,
    method: (client: CoordinatorClient) => Method<Req, Res>,
    request: Req,
    options: CallOptions,
  ): Promise<Res> {
    // The same request to every replica asked: an Acquire keeps its request id (R4).
    return this.#router.call(
      (address, leftMs) => this.send(address, name, method, request, { ...options, timeoutMs: leftMs }),
      options,
    );
  }

  /** An Acquire, Renew or Release: a message of the replica's LeaseStream, or the unary call. */
  #leaseCall<M extends keyof LeaseCalls>(
    name: M,
    method: (client: CoordinatorClient) => Method<LeaseCalls[M][0], LeaseCalls[M][1]>,
    request: LeaseCalls[M][0],
    options: CallOptions,
  ): Promise<LeaseCalls[M][1]> {
    if (!this.#streamed) return this.call(name, method, request, options);
    return this.#router.call(async (address, leftMs) => {
      const bounds = { ...options, timeoutMs: Math.min(leftMs, this.callTimeoutMs) };
      if (this.#unaryOnly.has(address)) return this.send(address, name, method, request, bounds);
      const settled = this.observer?.({ method: name, request, address, streamed: true });
      try {
        const response = await this.#leaseStreamAt(address).send(name, request, bounds);
        settled?.({ ok: true, response });
        return response;
      } catch (raw) {
        const error = toFencerError(raw);
        settled?.({ ok: false, error });
        if (!(error instanceof StreamUnimplementedError)) throw error;
        // A coordinator of the shared contract alone: nothing was read, so the same call goes unary at once.
        this.#unaryOnly.add(address);
        return this.send(address, name, method, request, bounds);
      }
    }, options);
  }

  #leaseStreamAt(address: string): LeaseStream {
    let stream = this.#leaseStreams.get(address);
    if (stream === undefined) {
      const client = this.clientAt(address);
      stream = new LeaseStream({
        open: () => client.LeaseStream(this.metadata()),
        timeoutMs: this.callTimeoutMs,
        // A replica's max connection age would otherwise close the stream with calls on it.
        channel: client.getChannel(),
      });
      this.#leaseStreams.set(address, stream);
    }
    return stream;
  }

  /** Closes the lease streams (each replica answers what it has), then the channels. */
  override close(): void {
    for (const stream of this.#leaseStreams.values()) stream.close();
    super.close();
  }

  /** Acquire (L2, L3, R1): the grant and whether it is a replay of this request id's. */
  async acquire(
    request: LeaseIdentity & { readonly requestId: string; readonly ttlMs: number },
    options: CallOptions = {},
  ): Promise<{ lease: LeaseGrant; replayed: boolean }> {
    const response = await this.#leaseCall(
      'Acquire',
      (client) => client.Acquire,
      {
        request_id: request.requestId,
        resource: request.resource,
        owner_id: request.ownerId,
        incarnation: request.incarnation.toString(),
        ttl_ms: String(request.ttlMs),
      },
      options,
    );
    return { lease: leaseGrant(response.lease), replayed: response.replayed };
  }

  /** Renew (L4); `ttlMs` 0 keeps the current TTL. */
  async renew(
    request: LeaseIdentity & { readonly token: bigint; readonly ttlMs: number },
    options: CallOptions = {},
  ): Promise<LeaseGrant> {
    const response = await this.#leaseCall(
      'Renew',
      (client) => client.Renew,
      {
        resource: request.resource,
        owner_id: request.ownerId,
        incarnation: request.incarnation.toString(),
        token: request.token.toString(),
        ttl_ms: String(request.ttlMs),
      },
      options,
    );
    return leaseGrant(response.lease);
  }

  /** Release (L5): true when this call freed the resource. */
  async release(request: LeaseIdentity & { readonly token: bigint }, options: CallOptions = {}): Promise<boolean> {
    const response = await this.#leaseCall(
      'Release',
      (client) => client.Release,
      {
        resource: request.resource,
        owner_id: request.ownerId,
        incarnation: request.incarnation.toString(),
        token: request.token.toString(),
      },
      options,
    );
    return response.released;
  }

  /** Describe: the valid lease, if any, and the last token granted. */
  async describe(resource: string, options: CallOptions = {}): Promise<{ lease?: LeaseGrant; lastToken: bigint }> {
    const response = await this.call<DescribeRequest, DescribeResponse__Output>(
      'Describe',
      (client) => client.Describe,
      { resource },
      options,
    );
    const lastToken = BigInt(response.last_token);
    return response.lease ? { lease: leaseGrant(response.lease), lastToken } : { lastToken };
  }
}

/** Where a sink connection goes and how it writes. */
export type SinkConnectionOptions = ConnectionOptions & {
  /**
   * write() as messages of the connection's one WriteStream (this project's
   * extension; see SinkWriteStream), or, false, as unary Write calls.
   * Default true; a sink that answers the stream UNIMPLEMENTED gets unary
   * Writes from then on either way.
   */
  readonly writeStream?: boolean;
};

/** The Sink's worker-facing RPCs, typed (AdvanceFence is the coordinator's, A4). */
export class SinkConnection extends Connection<SinkClient> {
  #writeStream: SinkWriteStream | undefined;
  /** False once the sink answered WriteStream UNIMPLEMENTED (or when asked for unary Writes). */
  #streamed: boolean;

  constructor(options: SinkConnectionOptions) {
    super(fencing.Sink, options.address, options);
    this.#streamed = options.writeStream ?? true;
  }

  /**
   * Write (F1–F3): a message of the connection's WriteStream, or a unary
   * call (see SinkConnectionOptions.writeStream), with the same receipt and
   * typed errors either way. Prefer FencedWriter, which sends the lease's
   * token and retries safely.
   */
  async write(request: WriteFields, options: CallOptions = {}): Promise<WriteReceipt> {
    if (this.#streamed) {
      const bounds = { timeoutMs: Math.min(options.timeoutMs ?? Infinity, this.callTimeoutMs), signal: options.signal };
      try {
        return await this.writeStream().write(request, bounds);
      } catch (error) {
        if (!(error instanceof StreamUnimplementedError)) throw error;
        // A sink of the shared contract alone: it read nothing, so this write and the later ones go unary.
        this.#streamed = false;
      }
    }
    const response = await this.call<WriteRequest, WriteResponse__Output>(
      'Write',
      (client) => client.Write,
      {
        resource: request.resource,
        token: request.token.toString(),
        result_id: request.resultId,
        payload: Buffer.from(request.payload),
      },
      options,
    );
    return { outcome: response.outcome === 'REPLAYED' ? 'replayed' : 'applied', fence: BigInt(response.fence) };
  }

  /**
   * The connection's one WriteStream (this project's extension: many Writes
   * on one call, same rules and typed errors as a unary Write), where
   * write() sends by default: opened on its first write, reopened after a
   * failure, closed with the connection.
   */
  writeStream(): SinkWriteStream {
    this.#writeStream ??= new SinkWriteStream({
      open: () => this.client.WriteStream(this.metadata()),
      // A sink's max connection age would otherwise close the stream with writes on it.
      channel: this.client.getChannel(),
      timeoutMs: this.callTimeoutMs,
      observer: this.observer,
    });
    return this.#writeStream;
  }

  /** Closes the write stream, if open (the sink answers what it has), then the channel. */
  override close(): void {
    this.#writeStream?.close();
    super.close();
  }

  /** Read: the stored payload and the token it was written with; ResultNotFoundError when nothing is stored. */
  async read(
    resource: string,
    resultId: string,
    options: CallOptions = {},
  ): Promise<{ payload: Buffer; token: bigint }> {
    const response = await this.call<ReadRequest, ReadResponse__Output>(
      'Read',
      (client) => client.Read,
      { resource, result_id: resultId },
      options,
    );
    return { payload: response.payload, token: BigInt(response.token) };
  }

  /** GetFence: the resource's fence, 0 when none was ever set. */
  async getFence(resource: string, options: CallOptions = {}): Promise<bigint> {
    const response = await this.call<GetFenceRequest, GetFenceResponse__Output>(
      'GetFence',
      (client) => client.GetFence,
      { resource },
      options,
    );
    return BigInt(response.fence);
  }
}

function leaseGrant(lease: Lease__Output | null): LeaseGrant {
  // The coordinator always sets the lease of an Acquire or Renew answer; a
  // missing one is a broken server, reported as such rather than as a token 0.
  if (!lease) throw toFencerError(new Error('the coordinator answered without a lease'));
  return {
    resource: lease.resource,
    ownerId: lease.owner_id,
    incarnation: BigInt(lease.incarnation),
    token: BigInt(lease.token),
    ttlMs: Number(lease.ttl_ms),
    remainingMs: Number(lease.remaining_ms),
    ...(lease.sink?.name ? { sink: { name: lease.sink.name, address: lease.sink.address } } : {}),
  };
}
