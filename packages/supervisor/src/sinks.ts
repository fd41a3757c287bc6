// Sinks sharded by resource (P1–P4) as a cluster runs them: their names,
// the address each listens on, and the Toxiproxy proxies in front of each.
// One sink keeps the names it always had ('sink', workers_to_sink...), so
// a cluster of one is exactly what it was before sharding. Pure functions;
// startCluster does the starting.
import { listenUp } from './ports.js';

/** A sink of a sharded cluster: sink-1, sink-2... (its name in the coordinators' --sink NAME=..., and what kill, restart and nemeses address). */
export type SinkName = `sink-${number}`;

/** The name of a cluster's sink `index` (from 1) of `count`: 'sink' when it is the only one. */
export function sinkName(index: number, count: number): 'sink' | SinkName {
  return count === 1 ? 'sink' : `sink-${index}`;
}

/** The links of one sink, each through its own proxy. */
export interface SinkLinks {
  /** Workers to this sink. */
  readonly workersToSink: string;
  /** The coordinator (coordinator-1, with replicas) to this sink: its fence calls (L3). */
  readonly coordinatorToSink: string;
}

/**
 * The proxy names of sink `index` (from 1) of `count` in the Toxiproxy API:
 * the one sink's names (LINK_PROXY_NAMES), or workers_to_sink_2 and
 * coordinator_to_sink_2 for sink-2 of several. `coordinator` names the
 * proxy of a replica (coordinator_1_to_sink_2) instead of the one coordinator's.
 */
export function sinkProxyNames(index: number, count: number, prefix = '', coordinator?: number): SinkLinks {
  const suffix = count === 1 ? '' : `_${index}`;
  const from = coordinator === undefined ? 'coordinator' : `coordinator_${coordinator}`;
  return {
    workersToSink: `${prefix}workers_to_sink${suffix}`,
    coordinatorToSink: `${prefix}${from}_to_sink${suffix}`,
  };
}

/**
 * Where sink `index` (from 1) of `count` listens, given the cluster's sink
 * address: ten ports apart (50051, 50061...), so the coordinator's port
 * just above the first sink's and its replicas' above it stay free (see listenUp).
 */
export function sinkListen(listen: string, index: number, count: number): string {
  return count === 1 ? listen : listenUp(listen, index, `sink ${index}`, SINK_PORT_STEP);
}

const SINK_PORT_STEP = 10;

/**
 * The `--sink` values a coordinator is given for sinks it dials at
 * `addresses`: the bare address of the only one (the coordinator names it
 * `default`), else NAME=HOST:PORT for each (P1).
 */
export function sinkFlagValues(sinks: readonly { readonly name: string; readonly address: string }[]): string[] {
  return sinks.length === 1 ? [sinks[0]!.address] : sinks.map(({ name, address }) => `${name}=${address}`);
}
