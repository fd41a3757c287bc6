// Faults of coordinator replicas on etcd (H): the leader killed or frozen
// past its leader lease, one replica cut from etcd, one etcd member or a
// majority of them killed. What PROTOCOL.md says must survive them: one
// leader serving at a time (H2), a deposed leader writing nothing (H3, H5),
// the new leader resuming every lease (H4), and no grant at all without an
// etcd quorum, then service again once it returns (H6).
import { Toxiproxy } from 'toxiproxy-node-client';
import { sleep } from '@fencer/client';
import type { Cluster, EtcdMemberName, ReplicaName } from '@fencer/supervisor';
import { defineNemesis, type Nemesis } from './fault.js';
import { disableLinks } from './network.js';

/** What the replica nemeses act through: the supervisor's cluster started with `replicas`. */
export type ReplicaCluster = Pick<
  Cluster,
  'replicas' | 'etcd' | 'kill' | 'restart' | 'pidOf' | 'serving' | 'toxiproxy'
>;

/** The target the leader's faults record: which replica led is only known when one strikes (it is in the detail). */
export const LEADER = 'leader';

/**
 * The replica that leads: the one whose health says SERVING (H2), asked
 * until exactly one does, and it is not `besides` (a new leader after that
 * one's kill or pause). Rejects after `timeoutMs` (an election takes up to
 * a leader TTL after the last leader's lease ran out, longer on a loaded machine).
 */
export async function leaderOf(
  cluster: Pick<Cluster, 'serving' | 'replicas'>,
  timeoutMs = 30_000,
  besides?: ReplicaName,
): Promise<ReplicaName> {
  if (cluster.replicas.length === 0) throw new RangeError('the cluster runs no coordinator replicas');
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const serving = await cluster.serving();
    if (serving.length === 1 && serving[0] !== besides) return serving[0]!;
    if (performance.now() > deadline)
      throw new Error(
        `no single leader${besides ? ` other than ${besides}` : ''} within ${timeoutMs} ms: serving [${serving.join(', ')}]`,
      );
    await sleep(100);
  }
}

/**
 * Kill the leader: SIGKILL whichever replica leads now, so a standby must
 * win the election once the dead one's etcd lease runs out and resume its
 * leases (H4). Heal restarts it on its address, as a standby.
 */
export function killLeader(cluster: ReplicaCluster): Nemesis {
  return defineNemesis('kill-leader', { process: LEADER }, async () => {
    const leader = await leaderOf(cluster);
    const pid = cluster.pidOf(leader);
    await cluster.kill(leader);
    return {
      detail: `SIGKILL ${leader} (pid ${pid})`,
      undo: async () => `${leader} restarted as pid ${(await cluster.restart(leader)).child.pid}`,
    };
  });
}

/**
 * Pause the leader: SIGSTOP whichever replica leads now. Held past its
 * leader lease, a standby takes over; on SIGCONT the old leader must find
 * itself deposed before it answers or writes anything (H3, H5). Heal sends
 * SIGCONT.
 */
export function pauseLeader(cluster: ReplicaCluster): Nemesis {
  return defineNemesis('pause-leader', { process: LEADER }, async () => {
    const leader = await leaderOf(cluster);
    const pid = cluster.pidOf(leader);
    process.kill(pid, 'SIGSTOP');
    return {
      detail: `SIGSTOP ${leader} (pid ${pid})`,
      undo: async () => {
        try {
          process.kill(pid, 'SIGCONT');
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
          return `pid ${pid} was gone`;
        }
        return 'SIGCONT';
      },
    };
  });
}

/**
 * Cut one replica from etcd: every one of its proxies to an etcd member
 * disabled, so it can neither keep its leader lease nor write. As leader it
 * must stop serving once its lease runs out (H3); as a standby it only
 * cannot campaign. Heal enables the proxies again.
 */
export function cutFromEtcd(cluster: ReplicaCluster, replica: ReplicaName): Nemesis {
  return disableLinks('cut-from-etcd', { process: replica }, () => {
    const found = cluster.replicas.find(({ name }) => name === replica);
    if (!found) throw new RangeError(`cut-from-etcd: the cluster has no ${replica}`);
    const toxiproxy = new Toxiproxy(cluster.toxiproxy.url);
    return found.proxyNames.coordinatorToEtcd.map((proxy) => ({ toxiproxy, proxy }));
  });
}

/** Kill an etcd member (SIGKILL): the quorum of the others carries on. Heal restarts it with its data. */
export function killEtcdMember(cluster: ReplicaCluster, member: EtcdMemberName): Nemesis {
  return killEtcdMembers('kill-etcd', member, cluster, () => [member]);
}

/**
 * Kill a majority of the etcd members the cluster started (2 of 3): no
 * quorum, so no replica can lead and no Acquire may be granted (H6, fail
 * closed). Heal restarts them; the replicas must serve again by themselves.
 */
export function killEtcdMajority(cluster: ReplicaCluster): Nemesis {
  return killEtcdMembers('kill-etcd-majority', 'etcd', cluster, () => {
    const members = cluster.etcd?.members ?? [];
    if (members.length < 2) throw new RangeError('kill-etcd-majority: the cluster started fewer than 2 etcd members');
    return members.slice(0, Math.floor(members.length / 2) + 1).map(({ name }) => name as EtcdMemberName);
  });
}

function killEtcdMembers(
  kind: 'kill-etcd' | 'kill-etcd-majority',
  target: string,
  cluster: ReplicaCluster,
  members: () => readonly EtcdMemberName[],
): Nemesis {
  return defineNemesis(kind, { process: target }, async () => {
    const killed = members();
    const pids = killed.map((member) => cluster.pidOf(member));
    // One at a time, in order, so the detail names them as they went.
    for (const member of killed) await cluster.kill(member);
    return {
      detail: `SIGKILL ${killed.map((member, i) => `${member} (pid ${pids[i]})`).join(', ')}`,
      undo: async () => {
        for (const member of killed) await cluster.restart(member);
        return `${killed.join(', ')} restarted with their data`;
      },
    };
  });
}
