// The etcd launcher against the real binary: three members that keep a
// quorum through one member's SIGKILL and pause, a killed member that comes
// back with its data, one restarted while its peers are down; the lease
// checkpoint flags etcd must run with.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdHosts, startEtcdCluster, type EtcdCluster } from './etcd.js';
import { isProcessAlive } from './spawn.js';

const dir = mkdtempSync(join(tmpdir(), 'fencer-etcd-launcher-'));
let cluster: EtcdCluster;
let client: Etcd3;

beforeAll(async () => {
  cluster = await startEtcdCluster({ members: 3, dataDir: join(dir, 'data'), logDir: join(dir, 'logs') });
  client = new Etcd3({ hosts: etcdHosts(cluster.endpoints) });
}, 60_000);
afterAll(async () => {
  client?.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The state letter of /proc/PID/stat: T is stopped. */
function processState(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2]!;
}

describe('startEtcdCluster', () => {
  it('starts three members with lease checkpointing (H2) and the zap logger', async () => {
    expect(cluster.members.map((member) => member.name)).toEqual(['etcd-1', 'etcd-2', 'etcd-3']);
    expect(cluster.endpoints).toEqual(cluster.members.map((member) => member.endpoint));
    for (const member of cluster.members) {
      const args = readFileSync(`/proc/${member.pid}/cmdline`, 'utf8').split('\0');
      expect(args).toEqual(
        expect.arrayContaining([
          '--experimental-enable-lease-checkpoint',
          '--experimental-enable-lease-checkpoint-persist',
          '--logger',
          'zap',
        ]),
      );
    }
  });

  it('keeps serving through one member killed, and the member comes back with its data', async () => {
    await client.put('before').value('1');
    const [victim] = cluster.members;
    const killedPid = victim!.pid;
    await victim!.kill('SIGKILL');
    expect(isProcessAlive(killedPid)).toBe(false);
    // Two of three: a quorum still commits.
    await client.put('during').value('2');
    await victim!.restart();
    expect(victim!.pid).not.toBe(killedPid);
    const alone = new Etcd3({ hosts: etcdHosts([victim!.endpoint]) });
    try {
      // A linearizable read through the restarted member sees both writes.
      expect(await alone.get('before').string()).toBe('1');
      expect(await alone.get('during').string()).toBe('2');
    } finally {
      alone.close();
    }
  }, 60_000);

  it('pauses and resumes a member with SIGSTOP and SIGCONT', async () => {
    const member = cluster.members[1]!;
    // A client of another member: one of the paused member would hang (etcd3 has no default deadline).
    const other = new Etcd3({ hosts: etcdHosts([cluster.members[2]!.endpoint]) });
    try {
      await member.kill('SIGSTOP');
      expect(processState(member.pid)).toBe('T');
      await other.put('paused').value('3');
      await member.kill('SIGCONT');
      expect(processState(member.pid)).not.toBe('T');
    } finally {
      other.close();
    }
  }, 30_000);

  // Last: it takes the whole cluster down.
  it('restarts a member while its peers are down, and it rejoins once they return', async () => {
    await client.put('before-outage').value('4');
    for (const member of cluster.members) await member.kill('SIGKILL');
    const [first, ...others] = cluster.members;
    // Without a quorum it cannot publish itself, so its client address would hang: restart must not wait on it.
    await first!.restart();
    expect(isProcessAlive(first!.pid)).toBe(true);
    for (const member of others) await member.restart();
    const alone = new Etcd3({ hosts: etcdHosts([first!.endpoint]) });
    try {
      expect(await alone.get('before-outage').string()).toBe('4');
    } finally {
      alone.close();
    }
  }, 90_000);
});
