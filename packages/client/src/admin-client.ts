// The admin calls of A4 as an operator's tool makes them against a live
// deployment with an admin credential: Describe and ForceRelease at the
// coordinator, whose replicas are one service (H7: each call goes to the
// leader), and ListResults at a sink. `fencer inspect` and `fencer release
// --force` are built on it.
import * as grpc from '@grpc/grpc-js';
import {
  bearer,
  channelCredentials,
  fencing,
  unaryCall,
  type ClientTls,
  type CoordinatorClient,
  type DescribeResponse__Output,
  type ForceReleaseResponse__Output,
  type ListResultsResponse__Output,
  type SinkClient,
  type UnaryMethod,
} from '@fencer/proto';
import { toFencerError } from './errors.js';
import { LeaderRouter } from './replicas.js';

/** How an AdminClient reaches the services. */
export interface AdminClientOptions {
  /** The coordinator's replicas (one address when it has none), in the order to try them. */
  readonly coordinators: readonly string[];
  /** The admin's bearer token; undefined sends none (--insecure services, or a client certificate). */
  readonly token: string | undefined;
  readonly tls: ClientTls | undefined;
  /** The deadline of each attempt. */
  readonly timeoutMs: number;
}

/** A refused or failed admin call, as one line: "ADDRESS: CODE REASON: message". */
export class AdminCallError extends Error {
  /** The reason is left out when it only repeats the code. */
  static of(address: string, failure: { code: number; reason: string; message: string }): AdminCallError {
    const code = grpc.status[failure.code];
    const reason = failure.reason && failure.reason !== code ? ` ${failure.reason}` : '';
    return new AdminCallError(`${address}: ${code}${reason}: ${failure.message}`);
  }
}

/**
 * Admin calls with one credential and deadline. Coordinator calls follow
 * NOT_LEADER and go past a replica that cannot be reached, as the worker
 * library does (LeaderRouter). Every refusal, or every replica failing,
 * rejects with an AdminCallError naming the address that answered last.
 */
export class AdminClient {
  readonly #options: AdminClientOptions;
  readonly #router: LeaderRouter;
  readonly #coordinators = new Map<string, CoordinatorClient>();
  readonly #sinks = new Map<string, SinkClient>();

  constructor(options: AdminClientOptions) {
    this.#options = options;
    this.#router = new LeaderRouter(options.coordinators);
  }

  /** The coordinator's view of `resource`: its lease, last and next token. */
  describe(resource: string): Promise<DescribeResponse__Output> {
    return this.#atCoordinator((client) => client.Describe, { resource });
  }

  /** Ends the grant of `token` and fences its holder off (A4); a retry changes nothing. */
  forceRelease(resource: string, token: string): Promise<ForceReleaseResponse__Output> {
    return this.#atCoordinator((client) => client.ForceRelease, { resource, token });
  }

  /** The sink at `address`'s fence of `resource`, its owner, and its `limit` newest results. */
  async listResults(address: string, resource: string, limit: number): Promise<ListResultsResponse__Output> {
    const client = this.#client(this.#sinks, address, fencing.Sink);
    try {
      return await this.#call<object, ListResultsResponse__Output>(client, client.ListResults, { resource, limit });
    } catch (error) {
      throw AdminCallError.of(address, toFencerError(error));
    }
  }

  close(): void {
    for (const client of [...this.#coordinators.values(), ...this.#sinks.values()]) client.close();
  }

  async #atCoordinator<Req, Res>(
    method: (client: CoordinatorClient) => UnaryMethod<Req, Res>,
    request: Req,
  ): Promise<Res> {
    let address = this.#router.leader;
    try {
      return await this.#router.call(async (replica) => {
        address = replica;
        const client = this.#client(this.#coordinators, replica, fencing.Coordinator);
        return this.#call(client, method(client), request).catch((error: unknown) => {
          throw toFencerError(error);
        });
      });
    } catch (error) {
      throw AdminCallError.of(address, toFencerError(error));
    }
  }

  #call<Req, Res>(client: grpc.Client, method: UnaryMethod<Req, Res>, request: Req): Promise<Res> {
    const { token, timeoutMs } = this.#options;
    return unaryCall(client, method, request, {
      timeoutMs,
      metadata: token === undefined ? new grpc.Metadata() : bearer(token),
    });
  }

  #client<C extends grpc.Client>(
    clients: Map<string, C>,
    address: string,
    Client: new (address: string, credentials: grpc.ChannelCredentials) => C,
  ): C {
    let client = clients.get(address);
    if (client === undefined) {
      client = new Client(address, channelCredentials(this.#options.tls));
      clients.set(address, client);
    }
    return client;
  }
}
