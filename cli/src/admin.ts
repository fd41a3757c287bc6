// `fencer inspect` and `fencer release --force`: the admin actions of A4, as
// an operator runs them against a live deployment with an admin credential.
// The coordinator may be several replicas (H7): its calls go to the leader.
import * as grpc from '@grpc/grpc-js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { LeaderRouter, toFencerError } from '@fencer/client';
import {
  bearer,
  channelCredentials,
  fencing,
  remoteFailure,
  unaryCall,
  type ClientTls,
  type CoordinatorClient,
  type DescribeResponse__Output,
  type ForceReleaseResponse__Output,
  type ListResultsResponse__Output,
} from '@fencer/proto';
import {
  clientTls,
  ConfigError,
  configuredCommand,
  hostPortList,
  positiveInteger,
  readTokenFile,
  tlsOptions,
  type TlsFlags,
} from '@fencer/server-kit';

/** The flags every admin command shares, as commander parses them. */
interface AdminFlags extends TlsFlags {
  coordinator: readonly string[];
  tokenFile?: string;
  insecure?: boolean;
  timeoutMs: number;
  json?: boolean;
}

/** How an admin command reaches the services. */
interface AdminConfig {
  /** The coordinator's replicas (one address when it has none), in the order to try them. */
  readonly coordinators: readonly string[];
  readonly token: string | undefined;
  readonly tls: ClientTls | undefined;
  readonly timeoutMs: number;
  readonly json: boolean;
}

const ENV = 'FENCER_ADMIN';

/** --coordinator, --token-file / --insecure, --tls-*, --timeout-ms, --json (each also FENCER_ADMIN_*). */
function adminOptions(): Option[] {
  return [
    new Option(
      '--coordinator <host:port,...>',
      'the coordinator; several replicas comma-separated, and each call goes to the leader (H7)',
    )
      .argParser(hostPortList)
      .makeOptionMandatory()
      .env(`${ENV}_COORDINATOR`),
    new Option('--token-file <file>', 'file holding an admin bearer token').env(`${ENV}_TOKEN_FILE`),
    new Option('--insecure', 'send no bearer token (services run with --insecure)').env(`${ENV}_INSECURE`),
    ...tlsOptions('client', ENV),
    new Option('--timeout-ms <n>', 'deadline of each call').default(5_000).argParser(positiveInteger),
    new Option('--json', 'print one JSON object instead of text'),
  ];
}

/** A2, as for `fencer worker`: a token, a client certificate, or an explicit --insecure. Throws ConfigError. */
function adminConfig(flags: AdminFlags): AdminConfig {
  if (flags.tokenFile !== undefined && flags.insecure === true)
    throw new ConfigError('--token-file and --insecure exclude each other: choose one');
  if (flags.tokenFile === undefined && flags.insecure !== true && flags.tlsCert === undefined)
    throw new ConfigError('give --token-file FILE, a client certificate (--tls-cert, --tls-key) or --insecure');
  return Object.freeze({
    coordinators: flags.coordinator,
    token: flags.tokenFile === undefined ? undefined : readTokenFile(flags.tokenFile),
    tls: clientTls(flags),
    timeoutMs: flags.timeoutMs,
    json: flags.json === true,
  });
}

type Unary<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: Res) => void,
) => grpc.ClientUnaryCall;

/** One call with the admin's credential and deadline; a refusal becomes AdminCallError. */
async function adminCall<Req, Res>(
  config: AdminConfig,
  address: string,
  client: grpc.Client,
  method: Unary<Req, Res>,
  request: Req,
): Promise<Res> {
  try {
    return await unaryCall(client, method, request, {
      timeoutMs: config.timeoutMs,
      metadata: config.token === undefined ? new grpc.Metadata() : bearer(config.token),
    });
  } catch (error) {
    throw AdminCallError.of(address, remoteFailure(error as grpc.ServiceError));
  }
}

/** A refused or failed call: printed as one line, exit 1. */
class AdminCallError extends Error {
  /** "ADDRESS: CODE REASON: message", the reason left out when it only repeats the code. */
  static of(address: string, failure: { code: number; reason: string; message: string }): AdminCallError {
    const code = grpc.status[failure.code];
    const reason = failure.reason && failure.reason !== code ? ` ${failure.reason}` : '';
    return new AdminCallError(`${address}: ${code}${reason}: ${failure.message}`);
  }
}

/**
 * The coordinator's replicas as one service: each call goes to the leader,
 * following NOT_LEADER and going past a replica that cannot be reached, as
 * the worker library does (LeaderRouter); each attempt has the command's
 * deadline. A refusal, or every replica failing, is an AdminCallError naming
 * the replica that answered last.
 */
class AdminCoordinator {
  readonly #config: AdminConfig;
  readonly #router: LeaderRouter;
  readonly #clients = new Map<string, CoordinatorClient>();

  constructor(config: AdminConfig) {
    this.#config = config;
    this.#router = new LeaderRouter(config.coordinators);
  }

  async call<Req, Res>(method: (client: CoordinatorClient) => Unary<Req, Res>, request: Req): Promise<Res> {
    let address = this.#router.leader;
    try {
      return await this.#router.call(async (replica) => {
        address = replica;
        const client = this.#client(replica);
        return unaryCall(client, method(client), request, {
          timeoutMs: this.#config.timeoutMs,
          metadata: this.#config.token === undefined ? new grpc.Metadata() : bearer(this.#config.token),
        }).catch((error: unknown) => {
          throw toFencerError(error);
        });
      });
    } catch (error) {
      throw AdminCallError.of(address, toFencerError(error));
    }
  }

  close(): void {
    for (const client of this.#clients.values()) client.close();
  }

  #client(address: string): CoordinatorClient {
    let client = this.#clients.get(address);
    if (client === undefined) {
      client = new fencing.Coordinator(address, channelCredentials(this.#config.tls));
      this.#clients.set(address, client);
    }
    return client;
  }
}

/** Runs an admin command's body; an AdminCallError is one line on stderr and exit status 1. */
async function reporting(command: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (!(error instanceof AdminCallError)) throw error;
    process.stderr.write(`fencer ${command}: ${error.message}\n`);
    process.exitCode = 1;
  }
}

const print = (text: string) => process.stdout.write(text + '\n');

/** What `fencer inspect --json` prints. */
export interface Inspection {
  resource: string;
  coordinator: {
    lease: { owner_id: string; incarnation: string; token: string; ttl_ms: string; remaining_ms: string } | null;
    last_token: string;
    next_token: string;
  };
  sink: {
    /** The sink asked: the one that owns the resource (P3, P4), as this command reaches it. */
    address: string;
    /** Its name, when the coordinator's lease names it. */
    name?: string;
    fence: string;
    fence_owner_id: string;
    results: { result_id: string; token: string; size_bytes: string }[];
  };
}

/** `fencer inspect RESOURCE`: the coordinator's and the sink's view of one resource. */
export function inspectCommand(): Command {
  return configuredCommand(
    new Command('inspect')
      .description(
        "admin: a resource's lease, the coordinator's next token, the sink's fence with its owner, and the latest results",
      )
      .argument('<resource>', 'the resource to inspect'),
    [
      ...adminOptions(),
      new Option(
        '--sink <host:port,...>',
        'the sink; with sinks sharded by resource, each of them: the one that owns the resource is shown (P3)',
      )
        .argParser(hostPortList)
        .makeOptionMandatory()
        .env(`${ENV}_SINK`),
      new Option('--limit <n>', 'results to show, newest first (at most 1000)').default(10).argParser(positiveInteger),
    ],
    (flags: AdminFlags & { sink: readonly string[]; limit: number }) => {
      if (flags.limit > 1000) throw new ConfigError('--limit must be at most 1000');
      return { ...adminConfig(flags), sink: flags.sink, limit: flags.limit };
    },
    (config, resource: string) =>
      reporting('inspect', async () => {
        const coordinator = new AdminCoordinator(config);
        const sinks = config.sink.map((address) => new fencing.Sink(address, channelCredentials(config.tls)));
        try {
          const [described, ...listed] = await Promise.all([
            coordinator.call<object, DescribeResponse__Output>((client) => client.Describe, { resource }),
            ...sinks.map((sink, i) =>
              adminCall<object, ListResultsResponse__Output>(config, config.sink[i]!, sink, sink.ListResults, {
                resource,
                limit: config.limit,
              }),
            ),
          ]);
          // The sink the lease names, if this command reaches it at that address; else the one
          // with a fence for the resource, which only its owner ever gets (P4); else the first.
          const named = described.lease?.sink;
          let owner = config.sink.findIndex((address) => address === named?.address);
          if (owner < 0)
            owner = Math.max(
              0,
              listed.findIndex((answer) => BigInt(answer.fence) > 0n),
            );
          const inspection = inspectionOf(resource, described, config.sink[owner]!, listed[owner]!);
          print(config.json ? JSON.stringify(inspection) : describeInspection(inspection));
        } finally {
          coordinator.close();
          for (const sink of sinks) sink.close();
        }
      }),
  );
}

function inspectionOf(
  resource: string,
  described: DescribeResponse__Output,
  address: string,
  listed: ListResultsResponse__Output,
): Inspection {
  const lease = described.lease;
  return {
    resource,
    coordinator: {
      lease: lease
        ? {
            owner_id: lease.owner_id,
            incarnation: lease.incarnation,
            token: lease.token,
            ttl_ms: lease.ttl_ms,
            remaining_ms: lease.remaining_ms,
          }
        : null,
      last_token: described.last_token,
      next_token: described.next_token,
    },
    sink: {
      address,
      ...(lease?.sink?.name ? { name: lease.sink.name } : {}),
      fence: listed.fence,
      fence_owner_id: listed.fence_owner_id,
      results: listed.results.map(({ result_id, token, size_bytes }) => ({ result_id, token, size_bytes })),
    },
  };
}

function describeInspection({ resource, coordinator, sink }: Inspection): string {
  const { lease } = coordinator;
  const lines = [
    `resource     ${JSON.stringify(resource)}`,
    lease
      ? `lease        held by ${JSON.stringify(lease.owner_id)} (incarnation ${lease.incarnation}), token ${lease.token}, ${lease.remaining_ms} ms left of ${lease.ttl_ms}`
      : `lease        none (last token granted: ${coordinator.last_token})`,
    `next token   ${coordinator.next_token === '0' ? 'none left (T1)' : coordinator.next_token}`,
    `sink         ${sink.name ? `${JSON.stringify(sink.name)} at ` : ''}${sink.address}`,
    `sink fence   ${sink.fence}${sink.fence_owner_id ? `, bound to ${JSON.stringify(sink.fence_owner_id)}` : ''}`,
    sink.results.length === 0 ? 'results      none' : 'results      newest first',
    ...sink.results.map((r) => `  ${JSON.stringify(r.result_id)}  token ${r.token}  ${r.size_bytes} bytes`),
  ];
  return lines.join('\n');
}

/** `fencer release --force RESOURCE`: ends the latest grant and fences its holder off (ForceRelease). */
export function releaseCommand(): Command {
  return configuredCommand(
    new Command('release')
      .description("admin: end a resource's lease now and fence its holder off, so its writes are refused")
      .argument('<resource>', 'the resource to release'),
    [
      ...adminOptions(),
      new Option('--force', "required: the release is not the holder's own, it cuts the holder off"),
      new Option('--token <n>', "the grant to end (Describe's last_token); default: the latest").argParser((value) => {
        if (!/^[1-9]\d{0,19}$/.test(value))
          throw new InvalidArgumentError(`expected a positive integer, got "${value}"`);
        return value;
      }),
    ],
    (flags: AdminFlags & { force?: boolean; token?: string }) => {
      // A holder releases its own lease through the client library (L5);
      // without --force this command would suggest it does that.
      if (flags.force !== true) throw new ConfigError('only a forced release is possible here: add --force');
      return { ...adminConfig(flags), grantToken: flags.token };
    },
    (config, resource: string) =>
      reporting('release', async () => {
        const coordinator = new AdminCoordinator(config);
        try {
          // Reading the token first names the grant, so rerunning the command
          // after a lost answer cannot cut off a holder that came later.
          const token =
            config.grantToken ??
            (await coordinator.call<object, DescribeResponse__Output>((client) => client.Describe, { resource }))
              .last_token;
          if (token === '0') {
            print(
              config.json
                ? JSON.stringify({ resource, forced: false, last_token: '0' })
                : `${resource}: never granted; nothing to release`,
            );
            return;
          }
          const answer = await coordinator.call<object, ForceReleaseResponse__Output>((client) => client.ForceRelease, {
            resource,
            token,
          });
          if (config.json) print(JSON.stringify({ resource, token, ...answer }));
          else if (answer.forced)
            print(`${resource}: the grant of token ${token} is ended; the sink's fence is now ${answer.fence}`);
          else
            print(
              `${resource}: the grant of token ${token} was already fenced off or superseded (last token ${answer.last_token}); nothing changed`,
            );
        } finally {
          coordinator.close();
        }
      }),
  );
}
