// Prometheus metrics, one registry per process, served on --metrics HOST:PORT.
import { createServer } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { joinHostPort, listenAddress } from './cli-options.js';
import { StartupError } from './startup-error.js';

/** The `service` label of a service's metrics: fencing.v1.Sink → sink. */
export function serviceLabel(serviceName: string): string {
  return serviceName.slice(serviceName.lastIndexOf('.') + 1).toLowerCase();
}

/** The process's registry; services add their own metrics to it. */
export const registry = new Registry();

/** Calls by service, method and gRPC code name; each message of a message stream (WriteStream) counts as one call. */
export const rpcCalls = new Counter({
  name: 'fencer_rpc_calls_total',
  help: 'RPCs handled (each WriteStream message counts as one), by method and gRPC status code',
  labelNames: ['service', 'method', 'code'] as const,
  registers: [registry],
});

/**
 * Requests the call gate let through and grpc-js then read, inflated and
 * decoded: an unauthenticated caller never moves it (A6).
 */
export const requestsRead = new Counter({
  name: 'fencer_rpc_requests_read_total',
  help: 'Request messages read off the wire (inflated and decoded) after the caller was authenticated',
  labelNames: ['service', 'method'] as const,
  registers: [registry],
});

/**
 * V4: messages of message streams read and not yet answered (an answer
 * counts until the transport has taken it), summed over open streams. Each
 * stream stops reading at its window, so this stays within streams × window
 * however fast clients send or however slowly they read.
 */
export const streamMessagesInFlight = new Gauge({
  name: 'fencer_stream_messages_in_flight',
  help: 'Messages of open WriteStreams read but not yet answered (their answer not yet taken by the transport)',
  labelNames: ['service', 'method'] as const,
  registers: [registry],
});

/**
 * V4: protocol calls open, as the call gate counts them toward
 * --max-concurrent-streams (summed over connections). Every end of a call
 * takes it back down, so it is 0 on a server with nothing in flight; a call
 * that never left would show here before it locked its connection out.
 */
export const rpcCallsOpen = new Gauge({
  name: 'fencer_rpc_calls_open',
  help: 'Protocol calls open (counted per connection toward --max-concurrent-streams), summed over connections',
  labelNames: ['service'] as const,
  registers: [registry],
});

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

/** Handler latency in seconds, including durable commits; per message for message streams. */
export const rpcSeconds = new Histogram({
  name: 'fencer_rpc_duration_seconds',
  help: 'RPC handling time in seconds (per message for WriteStream)',
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
