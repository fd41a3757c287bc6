// Coordinator replicas on etcd as real processes (H2, H3, H4, H5): two
// `fencer coordinator --store etcd` children on one real etcd and a real
// `fencer sink`; only the leader serves, the standby names it, and a killed
// or paused leader is replaced without losing or repeating a grant.
import { describe, expect, it } from 'vitest';
import { CODE, eventually, ok, refused } from '@fencer/testkit';
import { acquireRequest, leaderOf, useReplicaRig } from './replica-helpers.js';

const rig = useReplicaRig();
const sink = rig.sink;

/** Two replicas on a fresh prefix, and which of them leads. */
async function twoReplicas() {
  const replicas = await rig.start(2);
  const leader = await leaderOf(replicas);
  const standby = replicas.find((replica) => replica !== leader)!;
  return { leader, standby };
}

describe('H2: one replica serves', () => {
  it('only the leader is SERVING and grants; the standby answers NOT_LEADER naming the leader, and grants nothing', async () => {
    const { leader, standby } = await twoReplicas();
    expect(await standby.serving()).toBe(false);
    const resource = `h2-${Date.now()}`;

    const refusal = refused(await standby.api.acquire(acquireRequest(resource, 'alice')));
    expect(refusal.code).toBe(CODE.UNAVAILABLE);
    expect(refusal.reason).toBe('NOT_LEADER');
    expect(refusal.metadata.leader).toBe(leader.address);
    expect(refused(await standby.api.describe(resource)).reason).toBe('NOT_LEADER');
    expect(await sink.fence(resource)).toBe('0');

    const granted = ok(await leader.api.acquire(acquireRequest(resource, 'alice'))).lease!;
    expect(granted.token).toBe('1');
    expect(await sink.fence(resource)).toBe('1');
  });
});

describe('H4: takeover', () => {
  it('SIGKILL of the leader: the standby takes over, loads the grants, and a retried Acquire with the same request_id gets the same token (R1)', async () => {
    const { leader, standby } = await twoReplicas();
    const resource = `h4-${Date.now()}`;
    const request = acquireRequest(resource, 'alice');
    const first = ok(await leader.api.acquire(request)).lease!;

    leader.process.kill('SIGKILL');
    await leader.process.exited;
    await eventually(async () => ((await standby.serving()) ? true : undefined), {
      what: 'the standby leading',
      timeoutMs: 20_000,
    });

    const retried = ok(await standby.api.acquire(request));
    expect(retried.replayed).toBe(true);
    expect(retried.lease!.token).toBe(first.token);
    // L7 from the takeover: the grant is still valid, so nobody else gets the resource.
    const held = refused(await standby.api.acquire(acquireRequest(resource, 'bob')));
    expect(held.reason).toBe('LEASE_HELD');
    expect(held.metadata.holder_owner_id).toBe('alice');
    // Exactly one advance: the fence never moved for the retry.
    expect(await sink.fence(resource)).toBe(first.token);
  });

  it('SIGSTOP of the leader past its leader lease, then SIGCONT: it answers NOT_LEADER, and the call it took while paused changed nothing (H3, H5)', async () => {
    const { leader, standby } = await twoReplicas();
    const resource = `h5-${Date.now()}`;
    leader.process.kill('SIGSTOP');
    let resumed = false;
    try {
      // Sent to the paused leader: it sits in the socket until the leader runs again.
      const stale = leader.api.acquire(acquireRequest(resource, 'mallory'));
      await eventually(async () => ((await standby.serving()) ? true : undefined), {
        what: 'the standby leading',
        timeoutMs: 20_000,
      });
      leader.process.kill('SIGCONT');
      resumed = true;
      const refusal = refused(await stale);
      expect(refusal.code).toBe(CODE.UNAVAILABLE);
      expect(refusal.reason).toBe('NOT_LEADER');
    } finally {
      if (!resumed) leader.process.kill('SIGCONT');
    }
    // The old leader finds itself deposed and names the new one.
    const named = await eventually(async () => {
      const result = await leader.api.acquire(acquireRequest(resource, 'mallory'));
      return !result.ok && result.failure.metadata.leader === standby.address ? result.failure : undefined;
    });
    expect(named.reason).toBe('NOT_LEADER');
    expect(await leader.serving()).toBe(false);
    // Nothing the paused leader was asked reached the sink or the store.
    expect(await sink.fence(resource)).toBe('0');
    expect(ok(await standby.api.describe(resource))).toMatchObject({ lease: null, last_token: '0' });
    expect(ok(await standby.api.acquire(acquireRequest(resource, 'alice'))).lease!.token).toBe('1');
  });
});
