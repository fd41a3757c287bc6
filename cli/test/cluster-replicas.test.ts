// fencer cluster --replicas: coordinator replicas on etcd (H), and the
// refusals that come before anything starts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Toxiproxy } from 'toxiproxy-node-client';
import { afterAll, describe, expect, it } from 'vitest';
import { isProcessAlive, replicasServing, type ReplicaLinks } from '@fencer/supervisor';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  eventually,
  ok,
  refused,
  runFencer,
  startFencer,
  startTestEtcd,
  stopFencer,
  tempDir,
} from '@fencer/testkit';

const dir = tempDir('fencer-cluster-replicas-');
afterAll(() => dir.remove());

describe('fencer cluster --replicas, refused before anything starts', () => {
  it('without an etcd on PATH nor --etcd: one line, exit 1, nothing started', async () => {
    const data = join(dir.path, 'no-etcd');
    const emptyPath = join(dir.path, 'empty-bin');
    const result = await runFencer(['cluster', '--replicas', '2', '--data', data], { env: { PATH: emptyPath } });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      "fencer cluster: no etcd on PATH to start the replicas' etcd from: install etcd (Debian: etcd-server), or name a running one (--etcd HOST:PORT,...)",
    ]);
    expect(existsSync(data)).toBe(false);
  });

  it.each([
    [['--etcd', '127.0.0.1:2379'], "error: --etcd is the replicas' etcd: give --replicas N too"],
    [['--replicas', '0'], "error: option '--replicas <n>' argument '0' is invalid."],
    [['--replicas', '2', '--etcd', '127.0.0.1:2379,'], "error: option '--etcd <host:port,...>' argument"],
  ])('%j is a one-line error', async (flags, message) => {
    const data = join(dir.path, 'bad-flags');
    const result = await runFencer(['cluster', '--data', data, ...flags]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(message);
    expect(existsSync(data)).toBe(false);
  });
});

interface ReplicasReady {
  address: string;
  coordinator: string;
  sink: string;
  links: { workersToSink: string; workersToCoordinator: string };
  replicas: { name: string; address: string; links: ReplicaLinks; proxyNames: ReplicaLinks }[];
  etcd: { endpoints: string[]; started: boolean };
  toxiproxy: string;
  pids: Record<string, number>;
}

describe('fencer cluster --replicas 2 --etcd', () => {
  it('H2: one replica serves, an Acquire through it is granted, the other answers NOT_LEADER naming its proxy', async () => {
    const etcd = await startTestEtcd();
    const data = join(dir.path, 'two');
    const cluster = await startFencer(
      [
        'cluster',
        '--replicas',
        '2',
        '--etcd',
        etcd.endpoint,
        '--data',
        data,
        '--sink-listen',
        '127.0.0.1:0',
        '--coordinator-listen',
        '127.0.0.1:0',
      ],
      { timeoutMs: 60_000 },
    );
    const ready = cluster.ready as unknown as ReplicasReady;
    const token = readFileSync(join(data, 'worker-a.token'), 'utf8').trim();
    const clients = ready.replicas.map((replica) => coordinatorClient(replica.links.workersToCoordinator));
    try {
      expect(ready.replicas.map((replica) => replica.name)).toEqual(['coordinator-1', 'coordinator-2']);
      expect(ready.coordinator).toBe(ready.replicas.map((replica) => replica.address).join(','));
      expect(ready.address).toBe(ready.coordinator);
      expect(ready.links.workersToCoordinator).toBe(
        ready.replicas.map((replica) => replica.links.workersToCoordinator).join(','),
      );
      expect(ready.etcd).toEqual({ endpoints: [etcd.endpoint], started: false });

      // Every replica link goes through its own proxy: cutting coordinator_N_to_etcd_1 cuts N from etcd.
      const proxies = await new Toxiproxy(ready.toxiproxy).getAll();
      const upstreams = Object.fromEntries(Object.values(proxies).map((p) => [p.name, [p.listen, p.upstream]]));
      expect(upstreams).toEqual({
        workers_to_sink: [ready.links.workersToSink, ready.sink],
        ...Object.fromEntries(
          ready.replicas.flatMap(({ address, links, proxyNames }) => [
            [proxyNames.workersToCoordinator, [links.workersToCoordinator, address]],
            [proxyNames.coordinatorToSink[0], [links.coordinatorToSink[0], ready.sink]],
            [proxyNames.coordinatorToEtcd[0], [links.coordinatorToEtcd[0], etcd.endpoint]],
          ]),
        ),
      });

      const [leader, ...others] = await eventually(
        async () => {
          const names = await replicasServing(ready.replicas);
          return names.length > 0 ? names : undefined;
        },
        { what: 'a replica SERVING', timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(others).toEqual([]);
      const leading = ready.replicas.findIndex((replica) => replica.name === leader);
      const standby = 1 - leading;

      const acquire = (requestId: string) => ({
        request_id: requestId,
        resource: 'report-42',
        owner_id: 'worker-a',
        incarnation: '1',
        ttl_ms: '5000',
      });
      expect(ok(await coordinatorApi(clients[leading]!, token).acquire(acquire('q-1'))).lease?.token).toBe('1');
      const sentOn = refused(await coordinatorApi(clients[standby]!, token).acquire(acquire('q-2')));
      expect([sentOn.code, sentOn.reason]).toEqual([CODE.UNAVAILABLE, 'NOT_LEADER']);
      // Its --advertise: the leader's workers' proxy, so a worker sent on stays behind Toxiproxy.
      expect(sentOn.metadata.leader).toBe(ready.replicas[leading]!.links.workersToCoordinator);
    } finally {
      for (const client of clients) client.close();
      await stopFencer(cluster, 15_000);
      await etcd.stop();
    }
    expect((await cluster.exited).code).toBe(0);
    for (const [name, pid] of Object.entries(ready.pids)) expect([name, isProcessAlive(pid)]).toEqual([name, false]);
  });
});
