// startCluster with replicas on an etcd it starts itself: what the chaos
// suite's replica and etcd nemeses stand on. Each replica and each etcd
// member is killed and restarted by name, and the cluster keeps serving
// through one replica at a time (H2) with nothing acknowledged lost (H4).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  credentialToken,
  isProcessAlive,
  type Cluster,
  type ClusterTarget,
  type ReplicaName,
} from '@fencer/supervisor';
import { coordinatorApi, coordinatorClient, eventually, ok, startTestCluster } from '@fencer/testkit';

let cluster: Cluster;
let stopCluster: () => Promise<void>;
beforeAll(async () => {
  ({ cluster, stop: stopCluster } = await startTestCluster('fencer-replicas-', { replicas: { count: 2 } }));
}, 90_000);
afterAll(() => stopCluster?.(), 60_000);

/** The one replica serving, once exactly one does (H2). */
const theLeader = () =>
  eventually(
    async () => {
      const serving = await cluster.serving();
      return serving.length === 1 ? serving[0] : undefined;
    },
    { what: 'exactly one replica SERVING', timeoutMs: 45_000, intervalMs: 200 },
  );

/** Acquire through a replica's workers' proxy (its --advertise), as worker-a. */
const acquireAt = async (name: ReplicaName, resource: string, requestId: string) => {
  const replica = cluster.replicas.find((candidate) => candidate.name === name)!;
  const client = coordinatorClient(replica.links.workersToCoordinator);
  try {
    const token = credentialToken(cluster.credentials!.credentialsFile, { identity: 'worker-a' });
    const lease = ok(
      await coordinatorApi(client, token).acquire({
        request_id: requestId,
        resource,
        owner_id: 'worker-a',
        incarnation: '1',
        ttl_ms: '60000',
      }),
    ).lease!;
    return lease.token;
  } finally {
    client.close();
  }
};

describe('a cluster of coordinator replicas on its own etcd', () => {
  it('starts three etcd members and two replicas, each addressable by name', () => {
    expect(cluster.etcd!.members.map((member) => member.name)).toEqual(['etcd-1', 'etcd-2', 'etcd-3']);
    expect(cluster.etcd!.endpoints).toEqual(cluster.etcd!.members.map((member) => member.endpoint));
    expect(cluster.replicas.map((replica) => replica.name)).toEqual(['coordinator-1', 'coordinator-2']);
    expect(cluster.pidOf('etcd-2')).toBe(cluster.etcd!.members[1]!.pid);
    // With replicas, 'coordinator' is coordinator-1, so single-coordinator nemeses still have a target.
    expect(cluster.pidOf('coordinator')).toBe(cluster.replicas[0]!.child.child.pid);
    expect(cluster.proxyNames.workersToCoordinator).toBe('workers_to_coordinator_1');
    expect(cluster.replicas[1]!.proxyNames.coordinatorToEtcd).toEqual([
      'coordinator_2_to_etcd_1',
      'coordinator_2_to_etcd_2',
      'coordinator_2_to_etcd_3',
    ]);
  });

  it('an etcd member killed and restarted by name: a minority lost, a leader still grants', async () => {
    const pid = cluster.pidOf('etcd-1');
    expect(await cluster.kill('etcd-1')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(isProcessAlive(pid)).toBe(false);
    expect(await acquireAt(await theLeader(), 'during-etcd-loss', 'q-1')).toBe('1');
    await cluster.restart('etcd-1');
    expect(cluster.pidOf('etcd-1')).not.toBe(pid);
    expect(isProcessAlive(cluster.pidOf('etcd-1'))).toBe(true);
  });

  it('H4: the leader killed by name, the other replica takes over and answers a retried Acquire with the same token', async () => {
    const leader = await theLeader();
    const token = await acquireAt(leader, 'failover', 'q-2');
    const { address } = cluster.replicas.find((replica) => replica.name === leader)!.child.ready;
    await cluster.kill(leader);
    const next = await theLeader();
    expect(next).not.toBe(leader);
    expect(await acquireAt(next, 'failover', 'q-2')).toBe(token);

    // Restarted on its address, the old leader stands by: the new one keeps serving.
    const restarted = await cluster.restart(leader);
    expect(restarted.ready.address).toBe(address);
    expect(await cluster.serving()).toEqual([next]);
  });

  it('H6: a replica restarted while etcd has no quorum waits for it, and does not hold up the members restarting', async () => {
    await cluster.kill('etcd-1');
    await cluster.kill('etcd-2');
    await cluster.kill('coordinator-2');
    // It waits for etcd (its --etcd-wait-ms); the members' restarts must not wait for it in turn.
    const replicaBack = cluster.restart('coordinator-2');
    await cluster.restart('etcd-1');
    await cluster.restart('etcd-2');
    await replicaBack;
    expect(await acquireAt(await theLeader(), 'after-quorum-loss', 'q-3')).toBe('1');
  });

  it('stops cleanly, every replica and etcd member with it, after the kills and restarts it was asked for', async () => {
    const targets: ClusterTarget[] = [...cluster.replicas.map(({ name }) => name), 'etcd-1', 'etcd-2', 'etcd-3'];
    const pids = targets.map((target) => cluster.pidOf(target));
    expect(await cluster.stop()).toEqual({ clean: true });
    // An etcd member that outstays its stop grace is SIGKILLed as its shell goes; allow for its reaping.
    await eventually(() => (pids.some(isProcessAlive) ? undefined : true), {
      what: `${targets.filter((_, index) => isProcessAlive(pids[index]!)).join(', ')} to be gone`,
    });
  });
});
