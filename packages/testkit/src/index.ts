// @fencer/testkit: what tests share. Real fencer processes, typed gRPC
// clients, waiting on events with a bound, seeded randomness.
export * from './processes.js';
export * from './waiting.js';
export * from './prng.js';
export * from './clients.js';
export * from './standard-services.js';
export { healthStatus } from '@fencer/supervisor';
