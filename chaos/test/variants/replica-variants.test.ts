// The negative control of the pause-leader scenario (H2, H5): the same
// steps as chaos/test/scenarios/replicas.test.ts's "pause the leader past
// its leader lease", where the real replica, resumed, answers NOT_LEADER,
// here against replicas that serve past their leader lease. The resumed old
// leader must be caught answering as leader: a Renew it can answer from
// memory, with no guarded write to fail (H3), comes back renewed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinatorConnection } from '@fencer/client';
import { credentialToken } from '@fencer/supervisor';
import { tempDir } from '@fencer/testkit';
import { variantBin } from '@fencer/variants';
import { leaderOf, pauseLeader, Scenario } from '../../src/index.js';

// As replicas.test.ts: a failover takes seconds, the leader lease is shorter still (H2).
const LEADER_TTL_MS = 1_200;
// The holder's lease outlives the failover, so only the leadership is stale when the old leader answers.
const HOLDER_TTL_MS = 15_000;

const dir = tempDir('fencer-replica-variants-');
let s: Scenario;

beforeAll(async () => {
  s = await Scenario.start({
    name: 'past_leader_lease',
    data: dir.path,
    replicas: 2,
    workers: ['probe'],
    coordinatorFlags: ['--leader-ttl-ms', String(LEADER_TTL_MS)],
    binaries: { coordinator: variantBin('past-leader-lease-coordinator') },
  });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  dir.remove();
}, 60_000);

const probeToken = () => credentialToken(s.cluster.credentials!.credentialsFile, { identity: 'probe' });

// Real processes and an etcd: a loaded machine makes each step slower, never wrong.
describe('past-leader-lease-coordinator (H2/H5 broken)', { timeout: 180_000 }, () => {
  it('is caught: paused past its leader lease and resumed, the deposed leader renews instead of NOT_LEADER', async () => {
    const probe = new CoordinatorConnection({
      coordinators: s.cluster.replicas.map(({ child }) => child.ready.address),
      token: probeToken(),
    });
    const identity = { resource: 'past-lease', ownerId: 'probe', incarnation: 1n };
    const granted = await probe
      .acquire({ ...identity, requestId: 'past-lease-1', ttlMs: HOLDER_TTL_MS }, { timeoutMs: 10_000 })
      .finally(() => probe.close());
    const old = await leaderOf(s.cluster);
    const oldAddress = s.cluster.replicas.find((r) => r.name === old)!.child.ready.address;

    const thaw = await s.inject(pauseLeader(s.cluster));
    await leaderOf(s.cluster, 60_000, old);
    await thaw();

    // The real replica refuses here (replicas.test.ts); this one still answers from its deposed term.
    const resumed = new CoordinatorConnection({ address: oldAddress, token: probeToken() });
    try {
      const renewed = await resumed.renew(
        { ...identity, token: granted.lease.token, ttlMs: HOLDER_TTL_MS },
        { timeoutMs: 10_000 },
      );
      expect(renewed.token).toBe(granted.lease.token);
    } finally {
      resumed.close();
    }
  });
});
