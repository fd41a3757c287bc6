// Named scenarios of coordinator replicas on etcd (H): the leader killed,
// the leader paused past its leader lease, the leader cut from etcd, one
// etcd member killed, a majority killed. One cluster of two replicas on
// three etcd members runs them all in turn (each start costs seconds of a
// tight CI budget); after each the checker proves S1–S6 on the history so
// far, beside what the fault itself must show.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinatorConnection, FencerError, NotLeaderError } from '@fencer/client';
import { credentialToken, type ReplicaName } from '@fencer/supervisor';
import { eventually, tempDir } from '@fencer/testkit';
import {
  cutFromEtcd,
  killEtcdMajority,
  killEtcdMember,
  killLeader,
  leaderOf,
  pauseLeader,
  Scenario,
  type ScenarioWorker,
} from '../../src/index.js';
import { acquire, scripted, write } from './helpers.js';

// Short, so a failover takes seconds: the leader lease is shorter still (H2).
const LEADER_TTL_MS = 1_200;
// Holders' leases outlive a failover: the new leader resumes them (H4).
const HOLDER_TTL_MS = 15_000;

const dir = tempDir('fencer-replicas-');
let s: Scenario;
let probe: CoordinatorConnection;

beforeAll(async () => {
  s = await Scenario.start({
    name: 'replicas',
    data: dir.path,
    replicas: 2,
    workers: ['worker-a', 'worker-b', 'worker-c', 'worker-d', 'worker-e', 'probe'],
    coordinatorFlags: ['--leader-ttl-ms', String(LEADER_TTL_MS)],
  });
  // Calls outside the recorded history, to ask what only a direct call shows (R4's replay, H6's refusal).
  probe = new CoordinatorConnection({
    coordinators: s.cluster.replicas.map(({ child }) => child.ready.address),
    token: credentialToken(s.cluster.credentials!.credentialsFile, { identity: 'probe' }),
  });
}, 120_000);

afterAll(async () => {
  probe?.close();
  await s?.stop();
  dir.remove();
}, 60_000);

/** The replica that is not `name`, of two. */
const other = (name: ReplicaName): ReplicaName => s.cluster.replicas.find((r) => r.name !== name)!.name;

/**
 * Acquires once a replica leads, asking again (a bounded number of times)
 * when the worker's own retries ran out first: after an etcd member dies,
 * a leader whose keepalives went to it loses its short leader lease, and on
 * a loaded machine the next election can outlast a worker's retry budget
 * (availability, not safety: nothing is granted meanwhile).
 */
async function acquireWhenLed(worker: ScenarioWorker): Promise<bigint> {
  for (let attempt = 1; ; attempt++) {
    await leaderOf(s.cluster, 60_000);
    worker.send('acquire');
    const answer = await worker.next(['acquired', 'refused'], { timeoutMs: 60_000 });
    if (answer.event === 'acquired') return BigInt(answer.token);
    if (attempt === 3) throw new Error(`${worker.owner} was refused 3 times: ${JSON.stringify(answer)}`);
  }
}

const probeAcquire = (resource: string, requestId: string) =>
  probe.acquire({ resource, ownerId: 'probe', incarnation: 1n, requestId, ttlMs: HOLDER_TTL_MS }, { timeoutMs: 5_000 });

// Steps on real processes and an etcd: a loaded machine makes each slower, never wrong.
describe('replica scenarios (H)', { timeout: 180_000 }, () => {
  it('kill the leader: the other replica serves, resumes the lease and replays an Acquire (H2, H4, R4)', async () => {
    const a = await s.worker('worker-a', scripted('kill', HOLDER_TTL_MS, 3_000));
    const tokenA = await acquire(a);
    expect(await write(a, 'kill-1', 'A1')).toMatchObject({ event: 'written', outcome: 'applied' });
    const first = await probeAcquire('kill-replay', 'replay-1');

    const old = await leaderOf(s.cluster);
    const heal = await s.inject(killLeader(s.cluster));
    expect(await leaderOf(s.cluster, 60_000, old)).toBe(other(old));

    // The same request id after the failover: the same grant, replayed from etcd (H4, R4).
    const again = await probeAcquire('kill-replay', 'replay-1');
    expect(again.replayed).toBe(true);
    expect(again.lease.token).toBe(first.lease.token);
    // A's lease came through the failover: its next write is still applied with its token.
    expect(await write(a, 'kill-2', 'A2')).toMatchObject({ event: 'written', outcome: 'applied' });
    expect((await s.admin.coordinator.describe('kill')).lease?.token).toBe(tokenA);
    await heal();
    expect(await s.check()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('pause the leader past its leader lease: a standby takes over, the old one resumes deposed (H3, H5)', async () => {
    const b = await s.worker('worker-b', scripted('pause', HOLDER_TTL_MS, 3_000));
    await acquire(b);
    const old = await leaderOf(s.cluster);
    const oldAddress = s.cluster.replicas.find((r) => r.name === old)!.child.ready.address;
    const thaw = await s.inject(pauseLeader(s.cluster));
    const leader = await leaderOf(s.cluster, 60_000, old);
    expect(await write(b, 'pause-1', 'B1')).toMatchObject({ event: 'written', outcome: 'applied' });
    await thaw();

    // Resumed, its leader lease long run out: it refuses before it answers anything (H5).
    const resumed = new CoordinatorConnection({
      address: oldAddress,
      token: credentialToken(s.cluster.credentials!.credentialsFile, { role: 'admin' }),
    });
    try {
      await expect(resumed.describe('pause', { timeoutMs: 10_000 })).rejects.toBeInstanceOf(NotLeaderError);
    } finally {
      resumed.close();
    }
    expect(await leaderOf(s.cluster)).toBe(leader);
    expect(await write(b, 'pause-2', 'B2')).toMatchObject({ event: 'written', outcome: 'applied' });
    expect(await s.check()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('cut the leader from etcd: it stops serving, the other replica leads (H3)', async () => {
    const c = await s.worker('worker-c', scripted('cut', HOLDER_TTL_MS, 3_000));
    await acquire(c);
    const old = await leaderOf(s.cluster);
    const heal = await s.inject(cutFromEtcd(s.cluster, old));
    expect(await leaderOf(s.cluster, 60_000, old)).toBe(other(old));
    expect(await write(c, 'cut-1', 'C1')).toMatchObject({ event: 'written', outcome: 'applied' });
    await heal();
    expect(await s.check()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('kill one etcd member: the quorum carries on and grants go on', async () => {
    const heal = await s.inject(killEtcdMember(s.cluster, 'etcd-1'));
    const d = await s.worker('worker-d', scripted('member', HOLDER_TTL_MS, 3_000));
    await acquireWhenLed(d);
    expect(await write(d, 'member-1', 'D1')).toMatchObject({ event: 'written', outcome: 'applied' });
    await heal();
    // Some replica leads. Not necessarily the same one: at this short TTL a
    // leader whose keepalive stream was on the killed member may lose its
    // leader lease before its client moves to another member (availability,
    // not safety).
    expect(['coordinator-1', 'coordinator-2']).toContain(await leaderOf(s.cluster));
    expect(await s.check()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('kill a majority of etcd: nobody serves and nothing is granted, then service resumes by itself (H6)', async () => {
    const heal = await s.inject(killEtcdMajority(s.cluster));
    // Fail closed: once the leader lease runs out no replica serves (H2, H6).
    await eventually(async () => ((await s.cluster.serving()).length === 0 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'no replica serving without an etcd quorum',
    });
    const refused = await probeAcquire('quorum-probe', 'quorum-probe-1').then(
      (granted) => granted,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(FencerError);
    await heal();

    // Back without a restart of any replica: one leads, and grants again.
    await leaderOf(s.cluster, 60_000);
    const e = await s.worker('worker-e', scripted('quorum', HOLDER_TTL_MS, 3_000));
    await acquire(e);
    expect(await write(e, 'quorum-1', 'E1')).toMatchObject({ event: 'written', outcome: 'applied' });
    expect(await s.check()).toMatchObject({ violations: [], unchecked: [] });
  });
});
