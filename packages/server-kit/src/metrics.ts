// Prometheus metrics, one registry per process, served on --metrics HOST:PORT.
import { createServer } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { joinHostPort, listenAddress, StartupError } from '@fencer/cli-kit';

/** The `service` label of a service's metrics: fencing.v1.Sink → sink. */
export function serviceLabel(serviceName: string): string {
  return serviceName.slice(serviceName.lastIndexOf('.') + 1).toLowerCase();
}

/** The process's registry; services add their own metrics to it. */
export const registry = new Registry();

/** One label set's running value, changed on a hot path without a prom-client call. */
export class Tally<L extends string> {
  value = 0;
  #collected = 0;
  constructor(readonly labels: Readonly<Record<L, string>>) {}

  /** What was added since the last collection (a counter's increment). */
  takeIncrease(): number {
    const increase = this.value - this.#collected;
    this.#collected = this.value;
    return increase;
  }
}

/**
 * Running values by label set, read into a prom-client metric when it
 * collects (on a scrape). prom-client validates and hashes the labels on
 * every inc, dec and observe; made per call and per stream message, those
 * calls were ~14 % of the sink's CPU per streamed Write, so the paths that
 * run per call or per message add to a plain number instead. Label values
 * are given in one fixed order (each accessor below), so a key names one
 * label set.
 */
class Tallies<L extends string> {
  readonly #byKey = new Map<string, Tally<L>>();

  of(labels: Readonly<Record<L, string>>): Tally<L> {
    const key = Object.values(labels).join('\u0000');
    let tally = this.#byKey.get(key);
    if (tally === undefined) {
      tally = new Tally(labels);
      this.#byKey.set(key, tally);
    }
    return tally;
  }

  values(): IterableIterator<Tally<L>> {
    return this.#byKey.values();
  }
}

/** A prom-client counter whose increments are made on tallies. */
function talliedCounter<L extends string>(name: string, help: string, labelNames: readonly L[]): Tallies<L> {
  const tallies = new Tallies<L>();
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const tally of tallies.values()) {
        const increase = tally.takeIncrease();
        if (increase > 0) this.inc(tally.labels, increase);
      }
    },
  });
  return tallies;
}

/** A prom-client gauge whose value is kept on tallies. */
function talliedGauge<L extends string>(name: string, help: string, labelNames: readonly L[]): Tallies<L> {
  const tallies = new Tallies<L>();
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const tally of tallies.values()) this.set(tally.labels, tally.value);
    },
  });
  return tallies;
}

const callTallies = talliedCounter(
  'fencer_rpc_calls_total',
  'RPCs handled (each message of a WriteStream, AdvanceFenceStream or LeaseStream counts as one), by method and gRPC status code',
  ['service', 'method', 'code'],
);
/** Calls by service, method and gRPC code name; each message of a message stream (WriteStream, AdvanceFenceStream, LeaseStream) counts as one call. */
export const rpcCalls = (service: string, method: string, code: string) => callTallies.of({ service, method, code });

/** One method's calls by gRPC code, the OK tally looked up once: the common answer costs one addition. */
export function rpcCallsByCode(
  service: string,
  method: string,
): (code: grpc.status) => Tally<'service' | 'method' | 'code'> {
  const ok = rpcCalls(service, method, 'OK');
  return (code) => (code === grpc.status.OK ? ok : rpcCalls(service, method, grpc.status[code]));
}

const readTallies = talliedCounter(
  'fencer_rpc_requests_read_total',
  'Request messages read off the wire (inflated and decoded) after the caller was authenticated',
  ['service', 'method'],
);
/**
 * Requests the call gate let through and grpc-js then read, inflated and
 * decoded: an unauthenticated caller never moves it (A6).
 */
export const requestsRead = (service: string, method: string) => readTallies.of({ service, method });

const inFlightTallies = talliedGauge(
  'fencer_stream_messages_in_flight',
  'Messages of open message streams (WriteStream, AdvanceFenceStream, LeaseStream) read but not yet answered (their answer not yet taken by the transport)',
  ['service', 'method'],
);
/**
 * V4: messages of message streams read and not yet answered (an answer
 * counts until the transport has taken it), summed over open streams. Each
 * stream stops reading at its window, so this stays within streams × window
 * however fast clients send or however slowly they read.
 */
export const streamMessagesInFlight = (service: string, method: string) => inFlightTallies.of({ service, method });

const openTallies = talliedGauge(
  'fencer_rpc_calls_open',
  'Protocol calls open (counted per connection toward --max-concurrent-streams), summed over connections',
  ['service'],
);
/**
 * V4: protocol calls open, as the call gate counts them toward
 * --max-concurrent-streams (summed over connections). Every end of a call
 * takes it back down, so it is 0 on a server with nothing in flight; a call
 * that never left would show here before it locked its connection out.
 */
export const rpcCallsOpen = (service: string) => openTallies.of({ service });

/** V4: connections the server holds, as its listener counts them toward --max-connections. */
export const connectionsOpen = new Gauge({
  name: 'fencer_connections_open',
  help: 'Client connections open (counted toward --max-connections and --max-connections-per-host)',
  labelNames: ['service'] as const,
  registers: [registry],
});

/** V4: connections closed as they arrived, by the bound they would have passed. */
export const connectionsRefused = new Counter({
  name: 'fencer_connections_refused_total',
  help: 'Client connections closed on arrival because a connection bound was reached, by bound',
  labelNames: ['service', 'limit'] as const,
  registers: [registry],
});

/** V4: connections ended, by which side ended them. */
export const connectionsClosed = new Counter({
  name: 'fencer_connections_closed_total',
  help: 'Client connections ended, by the side that ended them (client, server) and whether they made a call',
  labelNames: ['service', 'closed_by', 'made_calls'] as const,
  registers: [registry],
});

/** V4: connections whose HTTP/2 session the server ended with an error code (http2-sessions.ts). */
export const http2SessionErrors = new Counter({
  name: 'fencer_http2_session_errors_total',
  help: 'Client connections whose HTTP/2 session the server ended with an error code (GOAWAY), by what the client did and the code',
  labelNames: ['service', 'kind', 'code'] as const,
  registers: [registry],
});

/** A6: full collections forced because memory outside V8's heap grew past its budget (memory-bound.ts). */
export const memoryCollections = new Counter({
  name: 'fencer_memory_collections_total',
  help: "Full garbage collections forced because external memory (headers of calls, above all) grew past the server's budget",
  registers: [registry],
});

/** Handler latency in seconds, including durable commits; per message for message streams. */
export const rpcSeconds = new Histogram({
  name: 'fencer_rpc_duration_seconds',
  help: 'RPC handling time in seconds (per message for WriteStream, AdvanceFenceStream and LeaseStream)',
  labelNames: ['service', 'method'] as const,
  buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 2],
  registers: [registry],
});

/** A running /metrics endpoint. */
export interface MetricsEndpoint {
  /** HOST:PORT actually bound. */
  readonly address: string;
  close(): Promise<void>;
}

// prom-client refuses to register the default metrics twice in one registry,
// and a process (a test, say) may serve several endpoints over its life.
let defaultMetricsCollected = false;

/**
 * Serves GET /metrics on `listen` (HOST:PORT, port 0 allowed). Rejects with
 * StartupError when the address is malformed or cannot be bound.
 */
export async function serveMetrics(listen: string): Promise<MetricsEndpoint> {
  const { host, port } = listenAddress('serve metrics', listen);
  if (!defaultMetricsCollected) {
    collectDefaultMetrics({ register: registry });
    defaultMetricsCollected = true;
  }
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end('only /metrics is served here\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: Error) => res.writeHead(500).end(error.message),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new StartupError(`cannot serve metrics on ${listen}: ${error.message}`)));
    server.listen(port, host, resolve);
  });
  const bound = server.address();
  const boundPort = typeof bound === 'object' && bound ? bound.port : port;
  return {
    address: joinHostPort(host, boundPort),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
