// H3's negative control, beside the real replica under the same steps: a
// grant a leader began while it led, whose write reaches etcd only after its
// deposition. The leader (coordinator-N) sends AdvanceFence for request q
// and its answer is held back (latency on its sink link); meanwhile it is
// cut from etcd, a standby takes over, and q's retry there gets token t2.
// Then the cut heals and the held answer arrives: the real replica's
// guarded write fails, while the broken one's unguarded write lands, over
// the new leader's record of q. Once the new leader is killed and the old
// one leads again, q's retry replays what etcd holds: t2 from the real
// replica, the older t1 from the broken one — one request id, two tokens
// (R1, S2).
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CoordinatorConnection } from '@fencer/client';
import { credentialToken, type ReplicaName } from '@fencer/supervisor';
import { eventually, tempDir } from '@fencer/testkit';
import { variantBin } from '@fencer/variants';
import { cutFromEtcd, killLeader, latencySpike, leaderOf, Scenario } from '../../src/index.js';

const LEADER_TTL_MS = 1_200;
const HOLDER_TTL_MS = 60_000;
// Held back longer than a failover, the heal of the cut and etcd3's circuit
// breaker (its hosts refuse calls for 5 s after failures) take together on a
// loaded machine, so the old leader's etcd client works again by the time the
// answer comes; the sink deadline outlasts it.
const HELD_MS = 20_000;

const dir = tempDir('fencer-unguarded-');
afterAll(() => dir.remove());
let s: Scenario | undefined;
afterEach(async () => {
  await s?.stop();
  s = undefined;
}, 60_000);

describe.each([
  { name: 'the real replica', bin: undefined, replays: 't2' },
  { name: 'unguarded-writes-coordinator (H3 broken)', bin: variantBin('unguarded-writes-coordinator'), replays: 't1' },
])('$name: a grant whose write reaches etcd after the deposition', { timeout: 240_000 }, ({ name, bin, replays }) => {
  it(`${replays === 't2' ? 'writes nothing' : 'is caught: its write lands'}; the request id's replay is ${replays}`, async () => {
    s = await Scenario.start({
      name: `unguarded_${replays}`,
      data: `${dir.path}/${replays}`,
      replicas: 2,
      workers: ['probe'],
      coordinatorFlags: ['--leader-ttl-ms', String(LEADER_TTL_MS), '--sink-deadline-ms', String(HELD_MS * 2)],
      ...(bin ? { binaries: { coordinator: bin } } : {}),
    });
    const cluster = s.cluster;
    const token = credentialToken(cluster.credentials!.credentialsFile, { identity: 'probe' });
    const addressOf = (replica: ReplicaName) => cluster.replicas.find((r) => r.name === replica)!.child.ready.address;
    const request = { resource: 'in-flight', ownerId: 'probe', incarnation: 1n, requestId: 'q', ttlMs: HOLDER_TTL_MS };

    const old = await leaderOf(cluster, 60_000);
    // Its channel to the sink is opened first: on a new connection the held
    // answer would hold back the sink's HTTP/2 settings too, and the request
    // with them.
    const warm = new CoordinatorConnection({ address: addressOf(old), token });
    await warm.acquire({ ...request, resource: 'warm-up', requestId: 'w' }).finally(() => warm.close());
    const sinkLink = {
      toxiproxy: s.toxiproxy,
      proxy: cluster.replicas.find((r) => r.name === old)!.proxyNames.coordinatorToSink[0]!,
    };
    const healLatency = await s.inject(latencySpike(sinkLink, { latencyMs: HELD_MS, direction: 'downstream' }));
    // Its call waits out the held answer.
    const toOld = new CoordinatorConnection({ address: addressOf(old), token, callTimeoutMs: HELD_MS * 3 });
    const first = toOld.acquire(request, { timeoutMs: HELD_MS * 3 }).then(
      (answer) => ({ answer }),
      (error: unknown) => ({ error }),
    );
    // The fence moved (the request went through; only the answer is held): t1.
    const t1 = await eventually(
      async () => {
        const fence = await s!.admin.sink.getFence(request.resource);
        return fence > 0n ? fence : undefined;
      },
      { timeoutMs: 30_000, what: 'the fence of t1' },
    );
    const healCut = await s.inject(cutFromEtcd(cluster, old));
    const next = await leaderOf(s.cluster, 60_000, old);
    const toNext = new CoordinatorConnection({ address: addressOf(next), token });
    try {
      // q's retry at the new leader, which loaded etcd before any write of q: a fresh grant.
      const { lease: second } = await eventually(
        () => toNext.acquire(request, { timeoutMs: 5_000 }).catch(() => undefined),
        { timeoutMs: 60_000, what: 'a grant of q by the new leader' },
      );
      const t2 = second.token;
      expect(t2).toBeGreaterThan(t1);
      await healCut();
      // The held answer arrives; the old leader answers NOT_LEADER either way
      // (H2), and the client follows it to the new leader, which replays t2 (H7, R1).
      const outcome = await first;
      expect('answer' in outcome && outcome.answer).toMatchObject({ lease: { token: t2 }, replayed: true });
      await healLatency();

      // The new leader dies; the old one, the only one left, leads again and loads etcd.
      await s.inject(killLeader(cluster));
      expect(await leaderOf(s.cluster, 60_000, next)).toBe(old);
      const { lease: replayed } = await eventually(
        () => toOld.acquire(request, { timeoutMs: 5_000 }).catch(() => undefined),
        { timeoutMs: 60_000, what: 'the replay of q' },
      );
      expect(replayed.token, name).toBe(replays === 't2' ? t2 : t1);
    } finally {
      toOld.close();
      toNext.close();
    }
  });
});
