// V4 at the connection level, for both servers: how many connections the
// server holds (its own listener counts them), how many calls one
// connection may hold open, what one call's headers may weigh, how much a
// connection may make the server buffer for it, and how long a connection
// that is silent, idle or stuck may live. The call and metadata bounds are
// the call gate's (RESOURCE_EXHAUSTED TOO_MANY_STREAMS or METADATA_TOO_LARGE,
// statuses any client can act on); everything else is enforced by grpc-js
// and Node's HTTP/2 (nghttp2), below any handler: a stream past a bound is
// refused (REFUSED_STREAM, or ENHANCE_YOUR_CALM past the memory or header
// bound) before a call exists, so no gRPC status can carry it.
import { InvalidArgumentError, Option } from 'commander';
import type { ServerOptions } from '@grpc/grpc-js';
import { positiveInteger } from '@fencer/cli-kit';

/** The connection bounds of a server; each has a `--max-...`-style flag. */
export interface ConnectionLimits {
  /**
   * Connections held at once; the next is closed as it arrives, with a log
   * line. Below the process's open-file limit, so that a flood of sockets
   * cannot take the descriptors LevelDB needs.
   */
  readonly maxConnections: number;
  /** Connections held at once from one client address: one host cannot take every place. */
  readonly maxConnectionsPerHost: number;
  /**
   * Protocol calls open at once on one connection; the next is refused
   * TOO_MANY_STREAMS by the call gate. HTTP/2 (SETTINGS_MAX_CONCURRENT_STREAMS)
   * refuses streams past twice this: room for the gate's refusals and for
   * health and reflection calls, which the gate does not count.
   */
  readonly maxConcurrentStreams: number;
  /**
   * A call's metadata, in bytes as HTTP/2 counts a header list (name, value
   * and 32 per entry; binary values as base64): the call gate answers a
   * larger one METADATA_TOO_LARGE before looking at its credentials (A6).
   * HTTP/2 (SETTINGS_MAX_HEADER_LIST_SIZE) refuses a header block past twice
   * this, pseudo-headers included, before a call exists: room for those,
   * and the backstop for calls the gate does not see.
   */
  readonly maxMetadataBytes: number;
  /**
   * What one connection may make the server hold, in MiB: responses its
   * client does not read included. Past it, new streams are refused.
   */
  readonly maxSessionMemoryMib: number;
  /** A connection with no call in progress this long is closed (GOAWAY). */
  readonly maxConnectionIdleMs: number;
  /** Every connection is pinged this often... */
  readonly keepaliveMs: number;
  /** ...and closed if the ping is not answered within this: silent sockets, dead peers. */
  readonly keepaliveTimeoutMs: number;
  /** Every connection is asked to go away after this long (clients reconnect), bounding stuck streams... */
  readonly maxConnectionAgeMs: number;
  /** ...and closed this long after that, with whatever it still holds. */
  readonly maxConnectionAgeGraceMs: number;
}

/**
 * Far above what an honest client has in flight on one connection (grpc-js
 * multiplexes all of a client's calls on one), while what those calls may
 * make the server hold is bounded by the session memory: 1,500 unread 1 MiB
 * responses on one connection cost 64 MiB, not 1.5 GB. A worker's metadata
 * (a bearer token, grpc-js's own headers) is a few hundred bytes; 8 KiB is
 * gRPC's usual bound (grpc-java's default, C-core's soft limit).
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  maxConnections: 4_096,
  maxConnectionsPerHost: 1_024,
  maxConcurrentStreams: 1_000,
  maxMetadataBytes: 8_192,
  maxSessionMemoryMib: 64,
  maxConnectionIdleMs: 300_000,
  keepaliveMs: 30_000,
  keepaliveTimeoutMs: 10_000,
  maxConnectionAgeMs: 3_600_000,
  maxConnectionAgeGraceMs: 60_000,
});

/** Timers above this fire at once in Node (2^31 − 1 ms), so no bound may exceed it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const FLAGS: readonly { key: keyof ConnectionLimits; flag: string; what: string }[] = [
  {
    key: 'maxConnections',
    flag: 'max-connections',
    what: 'connections held at once; the next is closed as it arrives and logged. Keep it below the open-file limit (ulimit -n) (V4)',
  },
  {
    key: 'maxConnectionsPerHost',
    flag: 'max-connections-per-host',
    what: 'connections held at once from one client address (V4)',
  },
  {
    key: 'maxConcurrentStreams',
    flag: 'max-concurrent-streams',
    what: 'calls open at once per connection; the next gets RESOURCE_EXHAUSTED TOO_MANY_STREAMS, and HTTP/2 refuses streams past twice this (V4)',
  },
  {
    key: 'maxMetadataBytes',
    flag: 'max-metadata-bytes',
    what: "a call's metadata (headers) in bytes; a larger one gets RESOURCE_EXHAUSTED METADATA_TOO_LARGE, and HTTP/2 refuses header blocks past twice this (A6, V4)",
  },
  {
    key: 'maxSessionMemoryMib',
    flag: 'max-session-memory-mib',
    what: 'MiB one connection may make the server buffer, unread responses included; past it new streams are refused (V4)',
  },
  {
    key: 'maxConnectionIdleMs',
    flag: 'max-connection-idle-ms',
    what: 'close a connection with no call this long (V4)',
  },
  { key: 'keepaliveMs', flag: 'keepalive-ms', what: 'ping every connection this often (V4)' },
  {
    key: 'keepaliveTimeoutMs',
    flag: 'keepalive-timeout-ms',
    what: 'close a connection whose peer does not answer a ping within this, e.g. one that never sent the HTTP/2 preface; a TLS handshake must finish within keepalive-ms + this (V4)',
  },
  {
    key: 'maxConnectionAgeMs',
    flag: 'max-connection-age-ms',
    what: 'ask every connection to go away after this long (V4)',
  },
  {
    key: 'maxConnectionAgeGraceMs',
    flag: 'max-connection-age-grace-ms',
    what: 'then close it, with calls still stuck on it, after this much more (V4)',
  },
];

/** The flags of every ConnectionLimits field, each also settable as `<envPrefix>_<NAME>`. */
export function connectionLimitOptions(envPrefix: string): Option[] {
  return FLAGS.map(({ key, flag, what }) =>
    new Option(`--${flag} <n>`, what)
      .env(`${envPrefix}_${flag.toUpperCase().replaceAll('-', '_')}`)
      .default(DEFAULT_CONNECTION_LIMITS[key])
      .argParser(boundedInteger(flag)),
  );
}

/** The limits among parsed options; what is absent (in-process callers) takes its default. */
export function connectionLimits(options: Partial<Record<keyof ConnectionLimits, number>>): ConnectionLimits {
  const limits = { ...DEFAULT_CONNECTION_LIMITS };
  for (const { key } of FLAGS) if (options[key] !== undefined) limits[key] = options[key];
  return Object.freeze(limits);
}

/** grpc-js server options that enforce `limits`. */
export function grpcServerOptions(limits: ConnectionLimits): ServerOptions {
  return {
    'grpc.max_concurrent_streams': 2 * limits.maxConcurrentStreams,
    'grpc-node.max_session_memory': limits.maxSessionMemoryMib,
    'grpc.max_connection_idle_ms': limits.maxConnectionIdleMs,
    'grpc.keepalive_time_ms': limits.keepaliveMs,
    'grpc.keepalive_timeout_ms': limits.keepaliveTimeoutMs,
    'grpc.max_connection_age_ms': limits.maxConnectionAgeMs,
    'grpc.max_connection_age_grace_ms': limits.maxConnectionAgeGraceMs,
  };
}

function boundedInteger(flag: string) {
  return (value: string): number => {
    const n = positiveInteger(value);
    if (n > MAX_TIMER_MS) throw new InvalidArgumentError(`--${flag} must be at most ${MAX_TIMER_MS}`);
    return n;
  };
}
