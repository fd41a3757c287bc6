// The core experiments of PROTOCOL.md, each on its own: an in-process
// coordinator on a FakeClock, talking over real gRPC to a real sink child.
import { describe, expect, it } from 'vitest';
import { eventually, CODE, coordinatorApi, coordinatorClient, ok, refused } from '@fencer/testkit';
import type { FakeClock } from '@fencer/common';
import { fresh, startTestCoordinator, useSinkProcess } from './helpers.js';

const TTL = 1_000;
const sink = useSinkProcess();

async function withCoordinator(
  options: { fenceOnExpiry?: boolean },
  body: (ctx: { api: ReturnType<typeof coordinatorApi>; clock: FakeClock }) => Promise<void>,
) {
  const started = await startTestCoordinator(sink.address, options);
  const client = coordinatorClient(started.coordinator.address);
  try {
    await body({ api: coordinatorApi(client), clock: started.clock });
  } finally {
    client.close();
    await started.coordinator.stop();
    started.remove();
  }
}

const acquireReq = (resource: string, owner: string, requestId = fresh('req')) => ({
  request_id: requestId,
  resource,
  owner_id: owner,
  incarnation: '1',
  ttl_ms: String(TTL),
});
const holder = (lease: { resource: string; owner_id: string; incarnation: string; token: string }) => ({
  resource: lease.resource,
  owner_id: lease.owner_id,
  incarnation: lease.incarnation,
  token: lease.token,
});

describe('experiments (in-process coordinator, real sink process)', () => {
  it('L1/L4: a renew at exactly the TTL boundary is refused LEASE_EXPIRED; one ms earlier it extends', () =>
    withCoordinator({}, async ({ api, clock }) => {
      const resource = fresh('boundary');
      const lease = ok(await api.acquire(acquireReq(resource, 'alice'))).lease!;
      clock.advance(TTL - 1);
      expect(ok(await api.renew({ ...holder(lease), ttl_ms: '0' })).lease).toMatchObject({
        token: lease.token,
        remaining_ms: String(TTL),
      });
      clock.advance(TTL);
      const failure = refused(await api.renew({ ...holder(lease), ttl_ms: '0' }));
      expect([failure.code, failure.reason]).toEqual([CODE.FAILED_PRECONDITION, 'LEASE_EXPIRED']);
    }));

  it('F5: a lease that expired with no takeover still has its writes ACCEPTED by the sink', () =>
    withCoordinator({}, async ({ api, clock }) => {
      const resource = fresh('f5');
      const lease = ok(await api.acquire(acquireReq(resource, 'alice'))).lease!;
      clock.advance(TTL * 10);
      expect(ok(await api.describe(resource))).toEqual({
        lease: null,
        last_token: lease.token,
        next_token: String(BigInt(lease.token) + 1n),
      });
      expect(refused(await api.renew({ ...holder(lease), ttl_ms: '0' })).reason).toBe('LEASE_EXPIRED');
      // Expiry alone does not fence: the fence still equals the expired holder's token.
      expect(await sink.fence(resource)).toBe(lease.token);
      expect(ok(await sink.write(resource, lease.token, 'result-1', 'late but accepted')).outcome).toBe('APPLIED');
    }));

  it('S3: after a takeover the old token is refused STALE_TOKEN and the new holder writes', () =>
    withCoordinator({}, async ({ api, clock }) => {
      const resource = fresh('takeover');
      const old = ok(await api.acquire(acquireReq(resource, 'alice'))).lease!;
      clock.advance(TTL);
      const successor = ok(await api.acquire(acquireReq(resource, 'bob'))).lease!;
      expect(BigInt(successor.token)).toBeGreaterThan(BigInt(old.token));
      expect(await sink.fence(resource)).toBe(successor.token);
      const stale = refused(await sink.write(resource, old.token, 'result-a', 'from alice'));
      expect([stale.code, stale.reason, stale.metadata.fence]).toEqual([
        CODE.FAILED_PRECONDITION,
        'STALE_TOKEN',
        successor.token,
      ]);
      expect(ok(await sink.write(resource, successor.token, 'result-b', 'from bob')).outcome).toBe('APPLIED');
      // And the old holder cannot renew its way back (NOT_LEASE_HOLDER).
      expect(refused(await api.renew({ ...holder(old), ttl_ms: '0' })).reason).toBe('NOT_LEASE_HOLDER');
    }));

  it('R1/R2: the same Acquire replayed returns the same grant; the same request id with other parameters is refused', () =>
    withCoordinator({}, async ({ api, clock }) => {
      const resource = fresh('replay');
      const request = acquireReq(resource, 'alice');
      const first = ok(await api.acquire(request));
      expect(first.replayed).toBe(false);
      clock.advance(250);
      const again = ok(await api.acquire(request));
      expect(again).toEqual({ replayed: true, lease: { ...first.lease, remaining_ms: String(TTL - 250) } });
      expect(await sink.fence(resource)).toBe(first.lease!.token);
      const reused = refused(await api.acquire({ ...request, ttl_ms: String(TTL * 2) }));
      expect([reused.code, reused.reason, reused.metadata.request_id]).toEqual([
        CODE.INVALID_ARGUMENT,
        'REQUEST_ID_REUSED',
        request.request_id,
      ]);
      expect(ok(await api.describe(resource)).lease).toMatchObject({ token: first.lease!.token, ttl_ms: String(TTL) });
    }));

  it('F3 with granted tokens: the same result replayed is REPLAYED, a conflicting payload is refused', () =>
    withCoordinator({}, async ({ api }) => {
      const resource = fresh('result');
      const lease = ok(await api.acquire(acquireReq(resource, 'alice'))).lease!;
      expect(ok(await sink.write(resource, lease.token, 'step-1', 'payload')).outcome).toBe('APPLIED');
      expect(ok(await sink.write(resource, lease.token, 'step-1', 'payload')).outcome).toBe('REPLAYED');
      const conflict = refused(await sink.write(resource, lease.token, 'step-1', 'other payload'));
      expect([conflict.code, conflict.reason]).toEqual([CODE.ALREADY_EXISTS, 'RESULT_CONFLICT']);
    }));

  it('F4/L2: resources are independent — a takeover of one does not fence another', () =>
    withCoordinator({}, async ({ api, clock }) => {
      const [a, b] = [fresh('indep-a'), fresh('indep-b')];
      const leaseA = ok(await api.acquire(acquireReq(a, 'alice'))).lease!;
      const leaseB = ok(await api.acquire(acquireReq(b, 'alice'))).lease!;
      expect(refused(await api.acquire(acquireReq(a, 'bob'))).reason).toBe('LEASE_HELD'); // a held...
      clock.advance(TTL);
      const takeoverA = ok(await api.acquire(acquireReq(a, 'bob'))).lease!; // ...until it expired
      expect(refused(await sink.write(a, leaseA.token, 'r', 'x')).reason).toBe('STALE_TOKEN');
      expect(await sink.fence(b)).toBe(leaseB.token);
      expect(ok(await sink.write(b, leaseB.token, 'r', 'x')).outcome).toBe('APPLIED');
      expect(ok(await sink.write(a, takeoverA.token, 'r', 'x')).outcome).toBe('APPLIED');
    }));

  it('L2: LEASE_HELD names the holder, its incarnation and the time left', () =>
    withCoordinator({}, async ({ api, clock }) => {
      const resource = fresh('held');
      ok(await api.acquire({ ...acquireReq(resource, 'alice'), incarnation: '7' }));
      clock.advance(300);
      const held = refused(await api.acquire(acquireReq(resource, 'bob')));
      expect([held.code, held.reason, held.metadata]).toEqual([
        CODE.ABORTED,
        'LEASE_HELD',
        { holder_owner_id: 'alice', holder_incarnation: '7', remaining_ms: '700' },
      ]);
    }));

  it('L8: with fence-on-expiry the expired holder is refused STALE_TOKEN without any takeover', () =>
    withCoordinator({ fenceOnExpiry: true }, async ({ api, clock }) => {
      const resource = fresh('l8');
      const lease = ok(await api.acquire(acquireReq(resource, 'alice'))).lease!;
      expect(ok(await sink.write(resource, lease.token, 'before', 'ok')).outcome).toBe('APPLIED');
      clock.advance(TTL);
      const fence = await eventually(
        async () => {
          const current = await sink.fence(resource);
          return current !== lease.token ? current : undefined;
        },
        { what: 'the coordinator to fence the expired lease' },
      );
      expect(BigInt(fence)).toBeGreaterThan(BigInt(lease.token));
      const stale = refused(await sink.write(resource, lease.token, 'after', 'too late'));
      expect([stale.code, stale.reason]).toEqual([CODE.FAILED_PRECONDITION, 'STALE_TOKEN']);
      // No grant happened: Describe shows no lease and the last *granted* token.
      expect(ok(await api.describe(resource))).toEqual({
        lease: null,
        last_token: lease.token,
        next_token: String(BigInt(fence) + 1n),
      });
      const next = ok(await api.acquire(acquireReq(resource, 'bob'))).lease!;
      expect(BigInt(next.token)).toBeGreaterThan(BigInt(fence));
    }));
});
