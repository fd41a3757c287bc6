// `fencer inspect` and `fencer release --force`: the admin actions of A4 as
// commands, their flags and what they print. The calls are @fencer/client's
// AdminClient (the coordinator's replicas as one service, H7).
import { Command, InvalidArgumentError, Option } from 'commander';
import { AdminCallError, AdminClient, type AdminClientOptions } from '@fencer/client';
import type { DescribeResponse__Output, ListResultsResponse__Output } from '@fencer/proto';
import {
  clientTls,
  ConfigError,
  configuredCommand,
  hostPortList,
  positiveInteger,
  readTokenFile,
  tlsOptions,
  type TlsFlags,
} from '@fencer/cli-kit';

/** The flags every admin command shares, as commander parses them. */
interface AdminFlags extends TlsFlags {
  coordinator: readonly string[];
  tokenFile?: string;
  insecure?: boolean;
  timeoutMs: number;
  json?: boolean;
}

/** How an admin command reaches the services, and whether it prints JSON. */
interface AdminConfig extends AdminClientOptions {
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
        const admin = new AdminClient(config);
        try {
          const [described, ...listed] = await Promise.all([
            admin.describe(resource),
            ...config.sink.map((address) => admin.listResults(address, resource, config.limit)),
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
          admin.close();
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
        const admin = new AdminClient(config);
        try {
          // Reading the token first names the grant, so rerunning the command
          // after a lost answer cannot cut off a holder that came later.
          const token = config.grantToken ?? (await admin.describe(resource)).last_token;
          if (token === '0') {
            print(
              config.json
                ? JSON.stringify({ resource, forced: false, last_token: '0' })
                : `${resource}: never granted; nothing to release`,
            );
            return;
          }
          const answer = await admin.forceRelease(resource, token);
          if (config.json) print(JSON.stringify({ resource, token, ...answer }));
          else if (answer.forced)
            print(`${resource}: the grant of token ${token} is ended; the sink's fence is now ${answer.fence}`);
          else
            print(
              `${resource}: the grant of token ${token} was already fenced off or superseded (last token ${answer.last_token}); nothing changed`,
            );
        } finally {
          admin.close();
        }
      }),
  );
}
