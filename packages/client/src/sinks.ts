// Several sinks, each owning some resources (P1–P4), reached through
// connections of the caller's own: a worker behind a proxy or on another
// network knows its sinks by other addresses than the coordinator does, so
// it is given its own list and needs no map of which sink owns what. A
// grant names its sink (Lease.sink, P3); where that address is one of the
// caller's, it is used as it is. Otherwise the owner is found by asking
// every sink for the resource's fence: only the owner ever got one (P4),
// and a grant is made only once its fence is in place (L3), so under a
// lease exactly one sink answers above 0. The answer is remembered.
import * as grpc from '@grpc/grpc-js';
import type { SinkConnection, SinkRef } from './connection.js';
import { UnavailableError } from './errors.js';

/** The sinks a client writes to, one connection each, and which of them owns each resource. */
export class ShardedSinks {
  readonly connections: readonly SinkConnection[];
  readonly #owners = new Map<string, SinkConnection>();

  /** RangeError without a connection. */
  constructor(connections: readonly SinkConnection[]) {
    if (connections.length === 0) throw new RangeError('no sink to write to');
    this.connections = connections;
  }

  /**
   * The connection to the sink that owns `resource`: the only one there is;
   * the one at `named` (a grant's Lease.sink) when that is one of ours; the
   * one remembered; else the one that holds a fence for it. With no fence
   * anywhere (nothing granted yet), the first, where nothing is stored for
   * it either. UnavailableError when a sink that could be the owner did
   * not answer: retry.
   */
  async owner(resource: string, named?: SinkRef): Promise<SinkConnection> {
    if (this.connections.length === 1) return this.connections[0]!;
    const byAddress = named && this.connections.find((c) => c.address === named.address);
    if (byAddress) return byAddress;
    const known = this.#owners.get(resource);
    if (known) return known;
    const fences = await Promise.allSettled(this.connections.map((c) => c.getFence(resource)));
    const owner = this.connections.find((_, i) => {
      const fence = fences[i]!;
      return fence.status === 'fulfilled' && fence.value > 0n;
    });
    if (owner) {
      this.#owners.set(resource, owner);
      return owner;
    }
    const silent = this.connections.filter((_, i) => fences[i]!.status === 'rejected');
    if (silent.length > 0) {
      throw new UnavailableError(
        {
          code: grpc.status.UNAVAILABLE,
          reason: '',
          metadata: {},
          fieldViolations: [],
          message: `no sink holds a fence for ${resource}, and ${silent.map((c) => c.address).join(', ')} did not answer: the owner may be among them`,
        },
        true,
      );
    }
    return this.connections[0]!;
  }

  /** Closes every connection. */
  close(): void {
    for (const connection of this.connections) connection.close();
  }
}
