// Thin gRPC handlers: authorize (A2/A4, in unaryFactory), validate every
// field (V1/V2) before state is touched, check the owner (A3), call the
// core, map the outcome (status.ts). Acquire, Renew and Release are the
// same functions whether they come as unary calls or as messages of a
// LeaseStream.
import {
  messageStreamFactory,
  RequestCheck,
  requireOwner,
  unaryFactory,
  type Authenticator,
  type CallContext,
  type Limits,
  type Logger,
  type OpenStreams,
  type Role,
} from '@fencer/server-kit';
import {
  statusMessage,
  type AcquireRequest__Output,
  type CoordinatorHandlers,
  type LeaseStreamRequest__Output,
  type LeaseStreamResponse,
  type ReleaseRequest__Output,
  type RenewRequest__Output,
} from '@fencer/proto';
import type { CoordinatorApi } from '../core/coordinator.js';
import type { ReleaseParams } from '../core/model.js';
import type { SinkTarget } from '../core/shards.js';
import {
  acquireResponseOrThrow,
  describeResponse,
  forceReleaseResponseOrThrow,
  releaseResponse,
  renewResponseOrThrow,
} from './status.js';

/** A4: who may call what. */
export const COORDINATOR_ROLES = Object.freeze({
  Acquire: ['worker'],
  Renew: ['worker'],
  Release: ['worker'],
  Describe: ['worker', 'admin'],
  ForceRelease: ['admin'],
  LeaseStream: ['worker'],
} as const satisfies Record<keyof CoordinatorHandlers, readonly Role[]>);

/**
 * The fencing.v1.Coordinator implementation over `core`; `limits` bound ids
 * and TTLs (V2); `sinkOf` names the sink that owns a resource in its leases (P3).
 */
export function coordinatorHandlers(
  core: CoordinatorApi,
  options: {
    log: Logger;
    limits: Limits;
    sinkOf: (resource: string) => SinkTarget;
    /** The server's open LeaseStreams, which a stop winds down. */
    streams: OpenStreams;
    /** The server's, against which each LeaseStream message checks its caller again (A7). */
    authenticator: Authenticator;
  },
): CoordinatorHandlers {
  const { limits, sinkOf } = options;
  const unary = unaryFactory({ service: 'coordinator', log: options.log });
  const messageStream = messageStreamFactory({
    service: 'coordinator',
    log: options.log,
    streams: options.streams,
    authenticator: options.authenticator,
  });
  const acquire = async (request: AcquireRequest__Output, { principal }: CallContext) => {
    const check = new RequestCheck(limits);
    const params = {
      requestId: check.id('request_id', request.request_id),
      resource: check.id('resource', request.resource),
      ownerId: check.id('owner_id', request.owner_id),
      incarnation: check.positive('incarnation', request.incarnation),
      ttlMs: check.ttlMs('ttl_ms', request.ttl_ms),
    };
    check.done();
    requireOwner(principal, params.ownerId);
    return acquireResponseOrThrow(await core.acquire(params), params.resource, sinkOf(params.resource));
  };
  const renew = async (request: RenewRequest__Output, { principal }: CallContext) => {
    const check = new RequestCheck(limits);
    const params = {
      ...holderParams(check, request),
      ttlMs: check.ttlMs('ttl_ms', request.ttl_ms, { zeroKeeps: true }),
    };
    check.done();
    requireOwner(principal, params.ownerId);
    return renewResponseOrThrow(await core.renew(params), params.resource, sinkOf(params.resource));
  };
  const release = async (request: ReleaseRequest__Output, { principal }: CallContext) => {
    const check = new RequestCheck(limits);
    const params = holderParams(check, request);
    check.done();
    requireOwner(principal, params.ownerId);
    return releaseResponse(await core.release(params));
  };
  return {
    Acquire: unary('Acquire', COORDINATOR_ROLES.Acquire, acquire),
    Renew: unary('Renew', COORDINATOR_ROLES.Renew, renew),
    Release: unary('Release', COORDINATOR_ROLES.Release, release),
    LeaseStream: messageStream<LeaseStreamRequest__Output, LeaseStreamResponse>(
      'LeaseStream',
      COORDINATOR_ROLES.LeaseStream,
      {
        handle: async (message, context) => {
          const { call_id } = message;
          if (message.acquire) return { call_id, acquired: await acquire(message.acquire, context) };
          if (message.renew) return { call_id, renewed: await renew(message.renew, context) };
          // Neither of those: a Release, or no call at all (refused naming `call`).
          const check = new RequestCheck(limits);
          const request = check.present('call', message.release);
          check.done();
          return { call_id, released: await release(request!, context) };
        },
        traceContext: (message) => message.trace_context,
        // As the unary calls' spans end in their method: `--name Acquire` finds both.
        spanName: (message) =>
          `LeaseStream ${message.acquire ? 'Acquire' : message.renew ? 'Renew' : message.release ? 'Release' : 'message'}`,
        // Named as sent, even when invalid: the worker matches answers by it.
        refuse: (message, status) => ({ call_id: message?.call_id ?? '0', refused: statusMessage(status) }),
      },
    ),
    Describe: unary('Describe', COORDINATOR_ROLES.Describe, async (request) => {
      const check = new RequestCheck(limits);
      const resource = check.id('resource', request.resource);
      check.done();
      return describeResponse(await core.describe(resource), await core.nextToken(resource), sinkOf(resource));
    }),
    ForceRelease: unary('ForceRelease', COORDINATOR_ROLES.ForceRelease, async (request, { principal }) => {
      const check = new RequestCheck(limits);
      const resource = check.id('resource', request.resource);
      const token = check.positive('token', request.token);
      check.done();
      return forceReleaseResponseOrThrow(await core.forceRelease(resource, token, principal.identity), resource);
    }),
  };
}

/** V2 for the fields that name a grant (Renew, Release); violations are collected in `check`. */
function holderParams(
  check: RequestCheck,
  request: { resource: string; owner_id: string; incarnation: string; token: string },
): ReleaseParams {
  return {
    resource: check.id('resource', request.resource),
    ownerId: check.id('owner_id', request.owner_id),
    incarnation: check.positive('incarnation', request.incarnation),
    token: check.positive('token', request.token),
  };
}
