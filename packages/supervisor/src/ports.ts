// Addresses of numbered processes of one kind (replicas, sharded sinks).
import { ConfigError, joinHostPort, splitHostPort } from '@fencer/cli-kit';

/**
 * Where the process numbered `index` (from 1) of several listens, given the
 * address of the first: `step` ports apart up from a fixed one (50052,
 * 50053... by 1), or port 0 for each when the first's is 0. Throws
 * ConfigError, naming `what`, past port 65535.
 */
export function listenUp(listen: string, index: number, what: string, step = 1): string {
  const { host, port } = splitHostPort(listen);
  if (port === 0) return listen;
  const next = port + (index - 1) * step;
  if (next > 65_535) throw new ConfigError(`${what} would listen on port ${next}, past 65535: lower the port`);
  return joinHostPort(host, next);
}
