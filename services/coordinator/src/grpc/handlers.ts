// Thin gRPC handlers: authorize (A2/A4, in unaryFactory), validate every
// field (V1/V2) before state is touched, check the owner (A3), call the
// core, map the outcome (status.ts).
import { RequestCheck, requireOwner, unaryFactory, type Limits, type Logger, type Role } from '@fencer/server-kit';
import type { CoordinatorHandlers } from '@fencer/proto';
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
} as const satisfies Record<keyof CoordinatorHandlers, readonly Role[]>);

/**
 * The fencing.v1.Coordinator implementation over `core`; `limits` bound ids
 * and TTLs (V2); `sinkOf` names the sink that owns a resource in its leases (P3).
 */
export function coordinatorHandlers(
  core: CoordinatorApi,
  options: { log: Logger; limits: Limits; sinkOf: (resource: string) => SinkTarget },
): CoordinatorHandlers {
  const { limits, sinkOf } = options;
  const unary = unaryFactory({ service: 'coordinator', log: options.log });
  return {
    Acquire: unary('Acquire', COORDINATOR_ROLES.Acquire, async (request, { principal }) => {
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
    }),
    Renew: unary('Renew', COORDINATOR_ROLES.Renew, async (request, { principal }) => {
      const check = new RequestCheck(limits);
      const params = {
        ...holderParams(check, request),
        ttlMs: check.ttlMs('ttl_ms', request.ttl_ms, { zeroKeeps: true }),
      };
      check.done();
      requireOwner(principal, params.ownerId);
      return renewResponseOrThrow(await core.renew(params), params.resource, sinkOf(params.resource));
    }),
    Release: unary('Release', COORDINATOR_ROLES.Release, async (request, { principal }) => {
      const check = new RequestCheck(limits);
      const params = holderParams(check, request);
      check.done();
      requireOwner(principal, params.ownerId);
      return releaseResponse(await core.release(params));
    }),
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
