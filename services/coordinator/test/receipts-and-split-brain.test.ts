// End-to-end R1 (a lost grant receipt) and L3/S1 under split brain: in-process
// coordinators over real gRPC against a real sink process.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { CODE, coordinatorApi, coordinatorClient, ok, refused } from '@fencer/testkit';
import { fresh, startTestCoordinator, useSinkProcess } from './helpers.js';

const sink = useSinkProcess();

/** The call reaches the server and is applied, but its response never reaches the caller. */
const loseResponse: grpc.Interceptor = (options, nextCall) =>
  new grpc.InterceptingCall(nextCall(options), {
    start(metadata, _listener, next) {
      next(metadata, {
        // The unary client reports only the status once it is an error, so the
        // response message is never seen by the caller. (Not calling next here
        // would make grpc-js hold the status back forever.)
        onReceiveStatus(_status, nextStatus) {
          nextStatus({
            code: grpc.status.UNAVAILABLE,
            details: 'response lost (test harness)',
            metadata: new grpc.Metadata(),
          });
        },
      });
    },
  });

describe('R1: a lost grant receipt', () => {
  it('the retry with the same request id gets the same token, replayed=true, and the fence moved exactly once', async () => {
    const { coordinator, remove } = await startTestCoordinator(sink.address);
    const lossy = coordinatorClient(coordinator.address, { interceptors: [loseResponse] });
    const reliable = coordinatorClient(coordinator.address);
    try {
      const resource = fresh('receipt');
      const request = { request_id: fresh('req'), resource, owner_id: 'alice', incarnation: '1', ttl_ms: '5000' };
      const lost = refused(await coordinatorApi(lossy).acquire(request));
      expect(lost.code).toBe(CODE.UNAVAILABLE);
      // It was applied: the grant exists and the fence moved.
      const described = ok(await coordinatorApi(reliable).describe(resource));
      expect(described.lease).toMatchObject({ owner_id: 'alice', token: '1' });

      const retry = ok(await coordinatorApi(reliable).acquire(request));
      expect(retry.replayed).toBe(true);
      expect(retry.lease!.token).toBe(described.lease!.token);
      // Exactly one advance: a second grant would have moved the fence to 2.
      expect(await sink.fence(resource)).toBe('1');
      expect(ok(await coordinatorApi(reliable).describe(resource)).last_token).toBe('1');
    } finally {
      lossy.close();
      reliable.close();
      await coordinator.stop();
      remove();
    }
  });
});

describe('S1/S3: split brain — two coordinators, one sink', () => {
  it('every token granted is distinct, the sink fence always equals the newest grant, the older holder is refused STALE_TOKEN', async () => {
    const a = await startTestCoordinator(sink.address);
    const b = await startTestCoordinator(sink.address);
    const clients = [coordinatorClient(a.coordinator.address), coordinatorClient(b.coordinator.address)];
    const apis = clients.map((client) => coordinatorApi(client));
    try {
      const resource = fresh('split');
      const granted: { coordinator: number; owner: string; token: string }[] = [];
      const held = new Map<number, { owner_id: string; incarnation: string; token: string }>();
      for (let round = 0; round < 6; round += 1) {
        const side = round % 2;
        const api = apis[side]!;
        // The previous holder on this side gives its lease back (each side only knows its own grants).
        const previous = held.get(side);
        if (previous) expect(ok(await api.release({ resource, ...previous })).released).toBe(true);
        const owner = `worker-${round}`;
        const lease = ok(
          await api.acquire({ request_id: fresh('req'), resource, owner_id: owner, incarnation: '1', ttl_ms: '60000' }),
        ).lease!;
        held.set(side, { owner_id: owner, incarnation: '1', token: lease.token });
        granted.push({ coordinator: side, owner, token: lease.token });

        expect(await sink.fence(resource)).toBe(lease.token);
        expect(ok(await sink.write(resource, lease.token, `result-${round}`, owner)).outcome).toBe('APPLIED');
        if (round > 0) {
          const older = granted[round - 1]!;
          // The other coordinator still thinks its holder's lease is valid — the fence says otherwise.
          expect(ok(await apis[older.coordinator]!.describe(resource)).lease?.token).toBe(older.token);
          const stale = refused(await sink.write(resource, older.token, `late-${round}`, older.owner));
          expect([stale.code, stale.reason]).toEqual([CODE.FAILED_PRECONDITION, 'STALE_TOKEN']);
        }
      }
      const tokens = granted.map((g) => BigInt(g.token));
      expect(new Set(tokens).size).toBe(tokens.length);
      expect([...tokens].sort((x, y) => (x < y ? -1 : 1))).toEqual(tokens); // strictly increasing in grant order
    } finally {
      clients.forEach((client) => client.close());
      await Promise.all([a.coordinator.stop(), b.coordinator.stop()]);
      a.remove();
      b.remove();
    }
  });
});
