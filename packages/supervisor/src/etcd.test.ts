// The etcd launcher against the real binary: three members that keep a
// quorum through one member's SIGKILL and pause, a killed member that comes
// back with its data, one restarted while its peers are down; the lease
// checkpoint flags etcd must run with.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdHosts, freePort, startEtcdCluster, type EtcdCluster } from './etcd.js';
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

describe('startEtcdCluster when a chosen port is taken before etcd binds it', () => {
  /** A listener on 127.0.0.1 that holds its port until closed (the health probes' connections with it). */
  async function holdPort(): Promise<{ port: number; close(): Promise<void> }> {
    const connections = new Set<Socket>();
    const server = createServer((socket) => {
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      port: (server.address() as AddressInfo).port,
      close: () =>
        new Promise((resolve) => {
          server.close(() => resolve());
          for (const socket of connections) socket.destroy();
        }),
    };
  }

  it('starts a new cluster again on fresh ports, and it serves', async () => {
    const taken = await holdPort();
    const here = mkdtempSync(join(tmpdir(), 'fencer-etcd-taken-'));
    let chosen = 0;
    const choosePort = async () => (chosen++ === 0 ? taken.port : freePort());
    const one = await startEtcdCluster({
      members: 1,
      dataDir: join(here, 'data'),
      logDir: join(here, 'logs'),
      choosePort,
    }).finally(() => taken.close());
    const etcd = new Etcd3({ hosts: etcdHosts(one.endpoints) });
    try {
      expect(one.endpoints).not.toContain(`127.0.0.1:${taken.port}`);
      expect(chosen).toBe(4);
      expect(readFileSync(one.members[0]!.log, 'utf8')).toContain('address already in use');
      await etcd.put('after-retry').value('served');
      expect(await etcd.get('after-retry').string()).toBe('served');
    } finally {
      etcd.close();
      await one.stop();
      rmSync(here, { recursive: true, force: true });
    }
  }, 60_000);

  it('gives up after three tries, naming the log, with nothing left running', async () => {
    const taken = await holdPort();
    const here = mkdtempSync(join(tmpdir(), 'fencer-etcd-taken-'));
    let chosen = 0;
    try {
      await expect(
        startEtcdCluster({
          members: 1,
          dataDir: join(here, 'data'),
          logDir: join(here, 'logs'),
          choosePort: async () => (chosen++, taken.port),
        }),
      ).rejects.toThrow(/etcd-1 exited.*etcd-1\.log/);
      // Two ports (client, peer) per try.
      expect(chosen).toBe(6);
      // etcd logs each refused bind twice: a warning, then the fatal line.
      expect(readFileSync(join(here, 'logs', 'etcd-1.log'), 'utf8').match(/address already in use/g)?.length).toBe(
        3 * 2,
      );
      expect(spawnSync('pgrep', ['-f', join(here, 'data')]).status, 'an etcd of this data dir still runs').toBe(1);
    } finally {
      await taken.close();
      rmSync(here, { recursive: true, force: true });
    }
  }, 60_000);
});
