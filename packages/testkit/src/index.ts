// @fencer/testkit: what tests share. Real fencer processes, typed gRPC
// clients, waiting on events with a bound, seeded randomness.
export * from './processes.js';
export * from './waiting.js';
export * from './data-dir.js';
// Seeded randomness lives in common, where production code (chaos schedules) may use it too.
export { prng } from '@fencer/common';
export * from './clients.js';
export { reflect, reflectedServices } from '@fencer/supervisor';
export { healthStatus } from '@fencer/supervisor';
export * from './certificates.js';
export * from './raw-grpc.js';
export * from './tmpfs.js';
export * from './raw-http2.js';
export * from './scripted-coordinator.js';
export * from './etcd.js';
export * from './restart-commands.js';
export * from './secured.js';
export * from './traced.js';
