// `fencer coordinator` flags and environment, read once, validated, frozen.
// Like the sink, it refuses to start without authentication unless
// --insecure is given explicitly (A2).
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { ClientTls } from '@fencer/proto';
import {
  clientTls,
  ConfigError,
  configuredCommand,
  hostPort,
  hostPortList,
  nonNegativeInteger,
  positiveInteger,
  serverTls,
  tlsOptions,
  type ServerTls,
  type TlsFlags,
} from '@fencer/cli-kit';
import {
  connectionLimitOptions,
  connectionLimits,
  serverAuth,
  serverOptions,
  type ConnectionLimits,
  type ServerAuth,
} from '@fencer/server-kit';
import { DEFAULT_CORE_LIMITS, type CoreLimits } from './core/quota.js';
import type { SinkTarget } from './core/shards.js';
import { DEFAULT_ETCD_PREFIX } from './adapters/etcd-store.js';

export { ConfigError };

/** How callers of the coordinator are authenticated: a credentials file (A2), or explicitly not at all. */
export type CoordinatorAuth = ServerAuth;

/**
 * Upper bound of --sink-deadline-ms. Far beyond any useful wait, and below
 * the 2^31 ms where timers overflow and every call would expire at once.
 */
export const MAX_SINK_DEADLINE_MS = 600_000;

/** Where the lease state lives: the embedded LevelDB (one coordinator), or etcd shared by replicas (H1). */
export type StoreKind = 'level' | 'etcd';
export const STORE_KINDS: readonly StoreKind[] = ['level', 'etcd'];

/** The default --leader-ttl-ms: a dead leader is replaced within about this. */
export const DEFAULT_LEADER_TTL_MS = 5_000;
/** The shortest --leader-ttl-ms: etcd leases are whole seconds, and the leader renews several times per TTL (H2). */
export const MIN_LEADER_TTL_MS = 1_000;
/** The default --etcd-wait-ms: long enough for an etcd that is itself starting. */
export const DEFAULT_ETCD_WAIT_MS = 10_000;

/** A replica's etcd settings (H1, H2), with --store etcd. */
export interface EtcdConfig {
  /** HOST:PORT of each etcd member this replica dials (--etcd). */
  readonly endpoints: readonly string[];
  /** Every key of the store and the election is under it; ends in '/' (--etcd-prefix). */
  readonly prefix: string;
  /** The election session's TTL in ms (--leader-ttl-ms, default 5000). */
  readonly leaderTtlMs: number;
  /** HOST:PORT clients are sent to while this replica leads (--advertise); undefined: the address it listens on. */
  readonly advertise: string | undefined;
  /** How long a starting replica asks an unreachable or quorumless etcd again before it exits (--etcd-wait-ms). */
  readonly waitMs: number;
}

/** A validated, frozen coordinator configuration. */
export interface CoordinatorConfig {
  /** HOST:PORT to serve gRPC on; port 0 picks a free port. */
  readonly listen: string;
  /** level (default) or etcd (H1). */
  readonly store: StoreKind;
  /** With --store etcd, where and how; null with --store level. */
  readonly etcd: EtcdConfig | null;
  /** LevelDB directory, created when missing; one coordinator per directory (--store level). */
  readonly dataDir: string;
  /** T2: open a damaged data directory with what is left, instead of refusing to start. */
  readonly repair: boolean;
  /** The sinks whose fences this coordinator advances, each resource on one (P1); one named `default` from a bare HOST:PORT. */
  readonly sinks: readonly SinkTarget[];
  /** The coordinator's bearer token for the sink (A1), or null when the sink runs --insecure. */
  readonly sinkToken: string | null;
  /** TLS to the sink (--sink-tls-ca, and --sink-tls-cert/-key for mutual TLS); undefined: plaintext. */
  readonly sinkTls: ClientTls | undefined;
  /** How callers are authenticated: a credentials file, or explicitly --insecure. */
  readonly auth: CoordinatorAuth;
  /** TLS (--tls-cert/--tls-key), mutual with --tls-ca; null: plaintext. */
  readonly tls: ServerTls | null;
  /** L8: advance the fence past leases that expire with no successor. */
  readonly fenceOnExpiry: boolean;
  /** R3: how long request records are kept, in ms (default one hour). */
  readonly requestRetentionMs: number;
  /** Deadline of each sink call in ms (default 2000); past it the Acquire is SINK_UNAVAILABLE. */
  readonly sinkDeadlineMs: number;
  /** HOST:PORT for Prometheus /metrics, or undefined for none. */
  readonly metrics: string | undefined;
  /** Spans go to this file as JSON lines; undefined: only if the OTEL_* environment asks. */
  readonly traceFile: string | undefined;
  /** V4: request records and Acquire rate, in all and per owner; idle resource entries kept in memory. */
  readonly coreLimits: CoreLimits;
  /** V4: streams, buffered bytes and lifetime of each connection. */
  readonly connectionLimits: ConnectionLimits;
}

/** Flag values as commander parses them; the V4 limits may be left out (their defaults apply). */
interface RawOptions extends TlsFlags, Partial<Record<keyof CoreLimits | keyof ConnectionLimits, number>> {
  listen: string;
  data: string;
  repair?: boolean;
  /** One --sink, or each of several, as given: [NAME=]HOST:PORT. */
  sink: string | readonly string[];
  sinkTokenFile?: string;
  sinkTlsCert?: string;
  sinkTlsKey?: string;
  sinkTlsCa?: string;
  credentials?: string;
  insecure?: boolean;
  fenceOnExpiry?: boolean;
  requestRetentionMs: number;
  sinkDeadlineMs: number;
  metrics?: string;
  traceFile?: string;
  // Left out (in-process tests): the defaults, as for the V4 limits.
  store?: StoreKind;
  etcd?: readonly string[];
  etcdPrefix?: string;
  leaderTtlMs?: number;
  advertise?: string;
  etcdWaitMs?: number;
}

/** Validates parsed options (reading the credentials and sink token files) into a frozen config. Throws ConfigError. */
export function coordinatorConfig(options: RawOptions): CoordinatorConfig {
  const auth = serverAuth(options);
  if (options.sinkDeadlineMs > MAX_SINK_DEADLINE_MS) {
    throw new ConfigError(
      `--sink-deadline-ms must be at most ${MAX_SINK_DEADLINE_MS} (an Acquire waits that long for the sink)`,
    );
  }
  return Object.freeze({
    listen: options.listen,
    store: options.store ?? 'level',
    etcd: etcdConfig(options),
    dataDir: options.data,
    repair: options.repair === true,
    sinks: sinkTargets(options.sink),
    sinkToken: options.sinkTokenFile === undefined ? null : readSinkToken(options.sinkTokenFile),
    sinkTls: clientTls({ tlsCert: options.sinkTlsCert, tlsKey: options.sinkTlsKey, tlsCa: options.sinkTlsCa }, 'sink-'),
    auth,
    tls: serverTls(options),
    fenceOnExpiry: options.fenceOnExpiry === true,
    requestRetentionMs: options.requestRetentionMs,
    sinkDeadlineMs: options.sinkDeadlineMs,
    metrics: options.metrics,
    traceFile: options.traceFile,
    coreLimits: Object.freeze({
      maxRequestRecords: options.maxRequestRecords ?? DEFAULT_CORE_LIMITS.maxRequestRecords,
      maxRecordsPerOwner: options.maxRecordsPerOwner ?? DEFAULT_CORE_LIMITS.maxRecordsPerOwner,
      maxAcquiresPerSecond: options.maxAcquiresPerSecond ?? DEFAULT_CORE_LIMITS.maxAcquiresPerSecond,
      maxIdleResources: options.maxIdleResources ?? DEFAULT_CORE_LIMITS.maxIdleResources,
    }),
    connectionLimits: connectionLimits(options),
  });
}

/**
 * Commander parser of --sink, given once or more: each value checked
 * (sinkTarget), all kept in order. The default (a string) is dropped by the
 * first value given.
 */
function sinkSpecs(value: string, previous: string | readonly string[]): readonly string[] {
  try {
    sinkTarget(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return typeof previous === 'string' ? [value] : [...previous, value];
}

/** The name a bare --sink HOST:PORT gets (P1). */
export const DEFAULT_SINK_NAME = 'default';
const SINK_NAME = /^[A-Za-z0-9_.-]+$/;

/** One --sink [NAME=]HOST:PORT; a bare address is the sink named `default`. Throws ConfigError. */
function sinkTarget(spec: string): SinkTarget {
  const equals = spec.indexOf('=');
  const [name, address] = equals < 0 ? [DEFAULT_SINK_NAME, spec] : [spec.slice(0, equals), spec.slice(equals + 1)];
  if (name === '') throw new ConfigError(`sink "${spec}": the name before '=' is empty`);
  if (!SINK_NAME.test(name)) {
    throw new ConfigError(`sink "${spec}": a sink name is made of A-Z, a-z, 0-9, '_', '.' and '-' only`);
  }
  try {
    hostPort(address);
  } catch (error) {
    throw new ConfigError(`sink "${spec}": ${(error as Error).message}`);
  }
  return Object.freeze({ name, address });
}

/**
 * The sinks of --sink [NAME=]HOST:PORT, given once or more (P1). A bare
 * address is the sink named `default`. Names are unique, non-empty, of
 * [A-Za-z0-9_.-]; addresses are unique and well-formed. Throws ConfigError.
 */
export function sinkTargets(specs: string | readonly string[]): readonly SinkTarget[] {
  const targets = (typeof specs === 'string' ? [specs] : specs).map(sinkTarget);
  targets.forEach((target, i) => {
    const earlier = targets.slice(0, i);
    if (earlier.some((t) => t.name === target.name))
      throw new ConfigError(`--sink: the name ${target.name} is given twice`);
    if (earlier.some((t) => t.address === target.address)) {
      throw new ConfigError(`--sink: the address ${target.address} is given twice`);
    }
  });
  return Object.freeze(targets);
}

/** The etcd settings of --store etcd; null for --store level, which refuses the etcd-only flags. Throws ConfigError. */
function etcdConfig(options: RawOptions): EtcdConfig | null {
  if (options.store !== 'etcd') {
    if (options.etcd !== undefined) throw new ConfigError('--etcd is only read with --store etcd');
    if (options.advertise !== undefined) throw new ConfigError('--advertise is only read with --store etcd');
    if (options.etcdWaitMs !== undefined) throw new ConfigError('--etcd-wait-ms is only read with --store etcd');
    return null;
  }
  if (options.etcd === undefined)
    throw new ConfigError('--store etcd needs --etcd HOST:PORT[,HOST:PORT...], the etcd members to use');
  const {
    etcdPrefix: prefix = DEFAULT_ETCD_PREFIX,
    leaderTtlMs = DEFAULT_LEADER_TTL_MS,
    etcdWaitMs: waitMs = DEFAULT_ETCD_WAIT_MS,
  } = options;
  if (!prefix.endsWith('/')) throw new ConfigError(`--etcd-prefix must end with '/' (got ${JSON.stringify(prefix)})`);
  if (leaderTtlMs < MIN_LEADER_TTL_MS)
    throw new ConfigError(`--leader-ttl-ms must be at least ${MIN_LEADER_TTL_MS} (etcd leases are whole seconds)`);
  return Object.freeze({ endpoints: options.etcd, prefix, leaderTtlMs, advertise: options.advertise, waitMs });
}

/** The bearer token in `path`, surrounding whitespace ignored. Throws ConfigError if unreadable, empty or not one token. */
export function readSinkToken(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read sink token file ${path}: ${(error as Error).message}`);
  }
  const token = text.trim();
  if (token.length === 0) throw new ConfigError(`sink token file ${path} is empty`);
  if (/\s/.test(token))
    throw new ConfigError(`sink token file ${path} must hold one bearer token without inner whitespace`);
  return token;
}

/**
 * The `coordinator` subcommand. Bad flags and bad values end in commander's
 * one-line error and a non-zero exit; `run` receives the validated config.
 */
export function buildCoordinatorCommand(run: (config: CoordinatorConfig) => Promise<void>): Command {
  return configuredCommand(
    new Command('coordinator').description(
      'the lease service: grants leases with fencing tokens, advancing the sink fence first (L1-L8, R1-R4)',
    ),
    [
      ...serverOptions('FENCER_COORDINATOR', { listen: '127.0.0.1:50052', data: './data/coordinator' }),
      new Option(
        '--sink <[name=]host:port>',
        'a sink whose fences this coordinator advances; repeat it for several, each resource on one (P1). A bare address is the sink named default',
      )
        .env('FENCER_COORDINATOR_SINK')
        .default('127.0.0.1:50051')
        .argParser(sinkSpecs),
      new Option('--sink-token-file <file>', "file holding the coordinator's bearer token for the sink").env(
        'FENCER_COORDINATOR_SINK_TOKEN_FILE',
      ),
      ...tlsOptions('client', 'FENCER_COORDINATOR', 'sink-'),
      new Option('--fence-on-expiry', 'advance the fence when a lease expires with no successor (L8)').env(
        'FENCER_COORDINATOR_FENCE_ON_EXPIRY',
      ),
      new Option('--request-retention-ms <n>', 'how long request ids are remembered (R3)')
        .env('FENCER_COORDINATOR_REQUEST_RETENTION_MS')
        .default(3_600_000)
        .argParser(positiveInteger),
      new Option('--sink-deadline-ms <n>', 'deadline of each sink call; past it the Acquire fails SINK_UNAVAILABLE')
        .env('FENCER_COORDINATOR_SINK_DEADLINE_MS')
        .default(2_000)
        .argParser(positiveInteger),
      new Option('--max-request-records <n>', 'request records kept at once, all owners together (V4, R3)')
        .env('FENCER_COORDINATOR_MAX_REQUEST_RECORDS')
        .default(DEFAULT_CORE_LIMITS.maxRequestRecords)
        .argParser(positiveInteger),
      new Option('--max-records-per-owner <n>', 'request records kept at once for one owner_id (V4, R3)')
        .env('FENCER_COORDINATOR_MAX_RECORDS_PER_OWNER')
        .default(DEFAULT_CORE_LIMITS.maxRecordsPerOwner)
        .argParser(positiveInteger),
      new Option('--max-acquires-per-second <n>', 'Acquires per second one owner_id may make, and its burst (V4)')
        .env('FENCER_COORDINATOR_MAX_ACQUIRES_PER_SECOND')
        .default(DEFAULT_CORE_LIMITS.maxAcquiresPerSecond)
        .argParser(positiveInteger),
      new Option(
        '--max-idle-resources <n>',
        'resource entries with no valid lease kept in memory as a cache; the rest are read from disk when used (V4)',
      )
        .env('FENCER_COORDINATOR_MAX_IDLE_RESOURCES')
        .default(DEFAULT_CORE_LIMITS.maxIdleResources)
        .argParser(nonNegativeInteger),
      ...connectionLimitOptions('FENCER_COORDINATOR'),
      new Option('--store <kind>', 'where the lease state lives: level (this machine) or etcd (shared by replicas, H1)')
        .env('FENCER_COORDINATOR_STORE')
        .choices(STORE_KINDS)
        .default('level'),
      new Option('--etcd <host:port,...>', 'the etcd members to keep the state in and campaign on (--store etcd)')
        .env('FENCER_COORDINATOR_ETCD')
        .argParser(hostPortList),
      new Option('--etcd-prefix <prefix>', "every etcd key of this coordinator's state is under it (ends in '/')")
        .env('FENCER_COORDINATOR_ETCD_PREFIX')
        .default(DEFAULT_ETCD_PREFIX),
      new Option('--leader-ttl-ms <n>', "the leader election session's TTL; a dead leader is replaced within it (H2)")
        .env('FENCER_COORDINATOR_LEADER_TTL_MS')
        .default(DEFAULT_LEADER_TTL_MS)
        .argParser(positiveInteger),
      new Option(
        '--etcd-wait-ms <n>',
        `how long a starting replica asks an unreachable etcd again before it exits (default ${DEFAULT_ETCD_WAIT_MS})`,
      )
        .env('FENCER_COORDINATOR_ETCD_WAIT_MS')
        .argParser(positiveInteger),
      new Option('--advertise <host:port>', 'the address standbys send clients to while this replica leads (H2, H7)')
        .env('FENCER_COORDINATOR_ADVERTISE')
        .argParser(hostPort),
    ],
    coordinatorConfig,
    run,
  );
}
