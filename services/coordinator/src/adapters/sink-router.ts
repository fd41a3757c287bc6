// The SinkPort over several sinks (P1, P3): each AdvanceFence goes to the
// sink that owns its resource, and only there, so a sink holds fences for
// its own resources alone and refuses writes to any other (P4). One client
// per sink; with one sink this is that sink's client.
import { sinkFor, type SinkTarget } from '../core/shards.js';
import type { FenceAdvance, SinkAdvanceOutcome, SinkPort } from '../core/sink-port.js';
import { GrpcSinkClient, type SinkClientOptions } from './sink-client.js';

/** How to reach every sink: the same credential, TLS and deadline for each. */
export type SinkRouterOptions = Omit<SinkClientOptions, 'address'>;

/** Routes each call to the owning sink's GrpcSinkClient. Never throws for remote failures. */
export class SinkRouter implements SinkPort {
  readonly #sinks: readonly SinkTarget[];
  readonly #clients: ReadonlyMap<string, GrpcSinkClient>;

  /** RangeError without sinks. */
  constructor(sinks: readonly SinkTarget[], options: SinkRouterOptions) {
    if (sinks.length === 0) throw new RangeError('a coordinator needs at least one sink');
    this.#sinks = sinks;
    this.#clients = new Map(
      sinks.map((sink) => [sink.name, new GrpcSinkClient({ ...options, address: sink.address })]),
    );
  }

  advanceFence(advance: FenceAdvance): Promise<SinkAdvanceOutcome> {
    return this.#clients.get(sinkFor(advance.resource, this.#sinks).name)!.advanceFence(advance);
  }

  /** Closes every channel. */
  close(): void {
    for (const client of this.#clients.values()) client.close();
  }
}
