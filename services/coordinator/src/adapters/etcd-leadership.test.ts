// H2 on a real etcd: one leader, standbys that learn its address, and a
// leader whose keepalives go unanswered that stops confirming within its
// leader lease, while etcd (stopped) still counts it as the leader.
import { randomUUID } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, systemClock, type Clock } from '@fencer/common';
import { silentLogger } from '@fencer/server-kit';
import { eventually, startTestEtcd, type TestEtcd } from '@fencer/testkit';
import { EtcdLeadership, LEADER_LEASE_FRACTION, type DepositionReason } from './etcd-leadership.js';
import type { LeadershipGuard } from './etcd-store.js';

let etcd: TestEtcd;
let client: Etcd3;
const running: EtcdLeadership[] = [];

beforeAll(async () => {
  etcd = await startTestEtcd();
  client = new Etcd3({ hosts: etcd.hosts });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((leadership) => leadership.stop()));
});

afterAll(async () => {
  client?.close();
  await etcd?.stop();
});

/** A campaigner on its own prefix' election, recording what it was told. */
function campaign(prefix: string, advertise: string, options: { ttlMs?: number; clock?: Clock } = {}) {
  const elected: LeadershipGuard[] = [];
  const deposed: DepositionReason[] = [];
  const leadership = EtcdLeadership.start({
    client,
    prefix,
    advertise,
    ttlMs: options.ttlMs ?? 1_000,
    clock: options.clock ?? systemClock,
    log: silentLogger,
    onElected: (guard) => elected.push(guard),
    onDeposed: (reason) => deposed.push(reason),
  });
  running.push(leadership);
  return { leadership, elected, deposed };
}

const freshPrefix = () => `/leadership-test/${randomUUID()}/`;

describe('H2: the election on <prefix>leader', () => {
  it('one campaigner leads; a second stands by, names the leader, and wins once the first steps down', async () => {
    const prefix = freshPrefix();
    const first = campaign(prefix, '10.0.0.1:50052');
    const guard = await eventually(() => first.elected[0], { what: 'the first campaigner elected' });
    expect(guard.key).toBe(`${prefix}leader`);
    expect(first.leadership.isConfirmed()).toBe(true);
    const stored = await client.get(`${prefix}leader`).exec();
    expect(stored.kvs[0]!.value.toString()).toBe('10.0.0.1:50052');
    expect(stored.kvs[0]!.create_revision).toBe(guard.createRevision);

    const second = campaign(prefix, '10.0.0.2:50052');
    await eventually(() => second.leadership.leaderAddress(), { what: 'the standby learning the leader' });
    expect(second.leadership.leaderAddress()).toBe('10.0.0.1:50052');
    expect(second.leadership.isConfirmed()).toBe(false);
    expect(second.elected).toEqual([]);

    // Stepping down revokes the session at once: no wait for its TTL.
    await first.leadership.stop();
    expect(first.deposed).toEqual(['resigned']);
    const next = await eventually(() => second.elected[0], { what: 'the standby elected' });
    expect(BigInt(next.createRevision)).toBeGreaterThan(BigInt(guard.createRevision));
    expect(second.leadership.leaderAddress()).toBe('10.0.0.2:50052');
    expect(second.leadership.isConfirmed()).toBe(true);
  });

  it('a leader whose key is deleted is deposed (key-lost) and campaigns again under a new revision', async () => {
    const prefix = freshPrefix();
    const only = campaign(prefix, '10.0.0.3:50052');
    const guard = await eventually(() => only.elected[0], { what: 'elected' });
    await client.delete().key(`${prefix}leader`).exec();
    await eventually(() => (only.deposed.length > 0 ? true : undefined), { what: 'deposition' });
    expect(only.deposed[0]).toBe('key-lost');
    const again = await eventually(() => only.elected[1], { what: 'elected again' });
    expect(again.createRevision).not.toBe(guard.createRevision);
  });

  it('a leader whose keepalives go unanswered (etcd SIGSTOPped) stops confirming at its leader lease, before the session TTL, and leads again once etcd resumes (H6)', async () => {
    const ttlMs = 1_200;
    const clock = new FakeClock();
    const prefix = freshPrefix();
    const leader = campaign(prefix, '10.0.0.4:50052', { ttlMs, clock });
    const guard = await eventually(() => leader.elected[0], { what: 'elected' });
    // The fake clock stands still, so every keepalive so far was sent at this instant.
    const sentMs = clock.nowMs();
    const leaderLeaseMs = leader.leadership.leaderLeaseMs;
    expect(leaderLeaseMs).toBe(Math.floor(ttlMs * LEADER_LEASE_FRACTION));
    expect(leaderLeaseMs).toBeLessThan(ttlMs);
    expect(leader.leadership.confirmedUntilMs()).toBe(sentMs + leaderLeaseMs);

    const member = etcd.cluster.members[0]!;
    await member.kill('SIGSTOP');
    try {
      clock.advance(leaderLeaseMs - 1);
      expect(leader.leadership.isConfirmed()).toBe(true);
      clock.advance(1);
      // etcd would keep the session until at least sentMs + ttlMs; this leader stopped trusting it here.
      expect(clock.nowMs()).toBeLessThan(sentMs + ttlMs);
      expect(leader.leadership.isConfirmed()).toBe(false);
      await eventually(() => (leader.deposed.length > 0 ? true : undefined), { what: 'deposition' });
      expect(leader.deposed).toEqual(['leader-lease-expired']);
      expect(leader.elected).toHaveLength(1);
    } finally {
      await member.kill('SIGCONT');
    }
    // Its old session is revoked and it wins again on its own.
    const again = await eventually(() => leader.elected[1], { what: 'elected again', timeoutMs: 20_000 });
    expect(BigInt(again.createRevision)).toBeGreaterThan(BigInt(guard.createRevision));
    expect(leader.leadership.isConfirmed()).toBe(true);
  });
});
