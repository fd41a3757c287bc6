// L1 broken on purpose: a coordinator that decides whether the lease in
// force has expired on the clock of the worker asking for it, as one that
// trusted a client's timestamp would. Nothing in fencer sends a worker's
// clock, so this variant brings its own wire: a header that a module
// preloaded into `fencer worker` (bin/send-worker-clock.js, through
// workerClockEnv) adds to every call, and that the variant coordinator reads
// into the calls it serves. Both are patches of grpc-js inside the variant's
// own processes; the real coordinator ignores the header. A header travels
// once per call, so the variant serves no LeaseStream (whose messages would
// all carry the clock of the moment the stream opened): its workers fall
// back to unary lease calls, as for any coordinator of the shared contract
// alone. With honest clocks
// the variant behaves like the real coordinator: only a worker whose clock
// runs ahead (the clock-skew nemesis) is granted a lease that is still valid.
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import type { CoordinatorApi } from '@fencer/coordinator';

/** The header: the sending worker's clock, in ms on its `performance.timeOrigin + performance.now()`. */
export const WORKER_CLOCK_HEADER = 'fencer-variant-worker-clock-ms';

const wallNowMs = () => performance.timeOrigin + performance.now();

/**
 * The environment that makes a `fencer worker` send WORKER_CLOCK_HEADER
 * (it keeps any NODE_OPTIONS of this process's).
 */
export function workerClockEnv(): NodeJS.ProcessEnv {
  const preload = fileURLToPath(new URL('../bin/send-worker-clock.js', import.meta.url));
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${preload}`.trim() };
}

/** In the worker: every call this process sends from now on carries its clock, read as its headers go out. */
export function sendWorkerClock(): void {
  const toHttp2Headers = grpc.Metadata.prototype.toHttp2Headers;
  grpc.Metadata.prototype.toHttp2Headers = function (this: grpc.Metadata) {
    return { ...toHttp2Headers.call(this), [WORKER_CLOCK_HEADER]: String(wallNowMs()) };
  };
}

/** The clock of the worker whose call is being served, while it is. */
const workerClocks = new AsyncLocalStorage<number>();
let reading = false;

/**
 * In the coordinator: every handler of every service added to a gRPC server
 * from now on runs with the caller's WORKER_CLOCK_HEADER, if it sent one,
 * where expireOnWorkerClock finds it. Idempotent.
 */
export function readWorkerClocks(): void {
  if (reading) return;
  reading = true;
  const addService = grpc.Server.prototype.addService;
  grpc.Server.prototype.addService = function (this: grpc.Server, service, implementation) {
    const withClock = (handler: (call: { metadata: grpc.Metadata }, ...rest: unknown[]) => void) =>
      function (this: unknown, call: { metadata: grpc.Metadata }, ...rest: unknown[]) {
        const sent = Number(call.metadata.get(WORKER_CLOCK_HEADER)[0]);
        if (!Number.isFinite(sent)) return handler.call(this, call, ...rest);
        return workerClocks.run(sent, () => handler.call(this, call, ...rest));
      };
    // grpc-js answers a method left out UNIMPLEMENTED.
    const wrapped = Object.fromEntries(
      Object.entries(implementation)
        .filter(([name]) => name !== 'LeaseStream')
        .map(([name, handler]) => [name, withClock(handler as never)]),
    );
    return addService.call(this, service, wrapped);
  };
}

/**
 * L1 broken: before an Acquire, the lease in force (another holder's) is
 * judged expired if the acquiring worker's clock has reached the lease's
 * end, the end being taken on this process's wall clock from what remains
 * of it on the coordinator's own. Such a lease is ended at once by a forced
 * release (which fences its holder), and the Acquire is granted. Calls that
 * carry no worker clock, and everything else, are the real core's.
 */
export function expireOnWorkerClock(core: CoordinatorApi): CoordinatorApi {
  return {
    acquire: async (params) => {
      const workerNowMs = workerClocks.getStore();
      if (workerNowMs !== undefined) {
        const { lease } = await core.describe(params.resource);
        if (lease && lease.ownerId !== params.ownerId && workerNowMs >= wallNowMs() + lease.remainingMs) {
          await core.forceRelease(params.resource, lease.token, null);
        }
      }
      return core.acquire(params);
    },
    renew: (params) => core.renew(params),
    release: (params) => core.release(params),
    describe: (resource) => core.describe(resource),
    nextToken: (resource) => core.nextToken(resource),
    forceRelease: (resource, token, adminId) => core.forceRelease(resource, token, adminId),
  };
}
