// fencer cluster routes every link through a named Toxiproxy proxy: its own
// `fencer toxiproxy`, or one given with --toxiproxy. Faults on a proxy reach
// exactly the link it names.
import { join } from 'node:path';
import { Toxiproxy } from 'toxiproxy-node-client';
import { afterAll, describe, expect, it } from 'vitest';
import { startToxiproxy } from '@fencer/toxiproxy';
import { silentLogger } from '@fencer/server-kit';
import { isProcessAlive } from '@fencer/supervisor';
import {
  coordinatorApi,
  coordinatorClient,
  eventually,
  ok,
  refused,
  startFencer,
  stopFencer,
  tempDir,
} from '@fencer/testkit';

const dir = tempDir('fencer-cluster-proxies-');
afterAll(() => dir.remove());

const clusterArgs = (data: string, ...extra: string[]) => [
  'cluster',
  '--insecure',
  '--data',
  data,
  '--sink-listen',
  '127.0.0.1:0',
  '--coordinator-listen',
  '127.0.0.1:0',
  ...extra,
];

interface ProxiedReady {
  sink: string;
  coordinator: string;
  toxiproxy: string;
  links: { workersToCoordinator: string; workersToSink: string; coordinatorToSink: string };
  pids: { toxiproxy?: number };
}

const acquire = (resource: string, requestId: string) => ({
  request_id: requestId,
  resource,
  owner_id: 'worker-a',
  incarnation: '1',
  ttl_ms: '5000',
});

describe('fencer cluster behind Toxiproxy', () => {
  it('starts its own proxy, and the coordinator reaches the sink only through coordinator_to_sink', async () => {
    const cluster = await startFencer(clusterArgs(join(dir.path, 'own')));
    const ready = cluster.ready as unknown as ProxiedReady;
    const client = coordinatorClient(ready.links.workersToCoordinator);
    try {
      const toxiproxy = new Toxiproxy(ready.toxiproxy);
      const proxies = await toxiproxy.getAll();
      expect(Object.fromEntries(Object.values(proxies).map((p) => [p.name, [p.listen, p.upstream]]))).toEqual({
        workers_to_coordinator: [ready.links.workersToCoordinator, ready.coordinator],
        workers_to_sink: [ready.links.workersToSink, ready.sink],
        coordinator_to_sink: [ready.links.coordinatorToSink, ready.sink],
      });
      const api = coordinatorApi(client);
      expect(ok(await api.acquire(acquire('through-proxies', 'q-1'))).lease?.token).toBe('1');

      // Cut the coordinator's link to the sink: nothing can be granted (L3).
      const link = proxies.coordinator_to_sink!;
      await link.update({ enabled: false, listen: link.listen, upstream: link.upstream });
      expect(refused(await api.acquire(acquire('cut-off', 'q-2'))).reason).toBe('SINK_UNAVAILABLE');
      await link.update({ enabled: true, listen: link.listen, upstream: link.upstream });
      // Healed: the coordinator's channel reconnects after its backoff, so
      // retry with the same request id (R1) until the grant goes through.
      const healed = await eventually(
        async () => {
          const result = await api.acquire(acquire('cut-off', 'q-2'));
          return result.ok ? result.value : undefined;
        },
        { what: 'an Acquire through the healed link', timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(BigInt(healed.lease!.token)).toBeGreaterThan(1n);
    } finally {
      client.close();
      await stopFencer(cluster);
    }
    expect(isProcessAlive(ready.pids.toxiproxy!)).toBe(false);
  });

  it('TOXIPROXY_URL (as --toxiproxy) creates the proxies in a running Toxiproxy and removes them when it stops', async () => {
    const external = await startToxiproxy({ listen: '127.0.0.1:0', log: silentLogger });
    try {
      const url = `http://${external.address}`;
      const cluster = await startFencer(clusterArgs(join(dir.path, 'external')), { env: { TOXIPROXY_URL: url } });
      const ready = cluster.ready as unknown as ProxiedReady;
      expect(ready.toxiproxy).toBe(url);
      expect(ready.pids.toxiproxy).toBeUndefined();
      const toxiproxy = new Toxiproxy(url);
      expect(Object.keys(await toxiproxy.getAll()).sort()).toEqual([
        'coordinator_to_sink',
        'workers_to_coordinator',
        'workers_to_sink',
      ]);
      await stopFencer(cluster);
      expect(await toxiproxy.getAll()).toEqual({});
    } finally {
      await external.stop();
    }
  });
});
