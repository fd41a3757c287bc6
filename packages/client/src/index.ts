// @fencer/client: what every worker of the fencing protocol would otherwise
// write by hand: typed connections, a lease keeper, a fenced writer, typed
// errors and a retry policy.
export * from './errors.js';
export * from './retry.js';
export * from './calls.js';
export * from './connection.js';
export * from './replicas.js';
export * from './sinks.js';
export * from './write-stream.js';
export * from './lease-keeper.js';
export * from './fenced-writer.js';
export * from './admin-client.js';
