// fencer cluster --sinks: sinks sharded by resource (P1–P4), each behind
// proxies of its own, every coordinator given all of them by name; one sink
// cut off stops only the resources it owns.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Toxiproxy } from 'toxiproxy-node-client';
import { afterAll, describe, expect, it } from 'vitest';
import type { SinkLinks } from '@fencer/supervisor';
import {
  coordinatorApi,
  coordinatorClient,
  ok,
  refused,
  runFencer,
  startFencer,
  stopFencer,
  tempDir,
} from '@fencer/testkit';

const dir = tempDir('fencer-cluster-sinks-');
afterAll(() => dir.remove());

interface ShardedReady {
  sink: string;
  coordinator: string;
  toxiproxy: string;
  links: { workersToCoordinator: string; workersToSink: string; coordinatorToSink: string };
  sinks: { name: string; address: string; links: SinkLinks; proxyNames: SinkLinks }[];
  pids: Record<string, number>;
}

const acquire = (resource: string) => ({
  request_id: `q-${resource}`,
  resource,
  owner_id: 'worker-a',
  incarnation: '1',
  ttl_ms: '60000',
});

// Enough resources that rendezvous hashing puts some on each of two sinks.
const RESOURCES = Array.from({ length: 8 }, (_, i) => `job-${i + 1}`);

describe('fencer cluster --sinks', () => {
  it('P1, P3: two sinks, each behind its own proxies; a cut sink stops only its own resources', async () => {
    const data = join(dir.path, 'two');
    const cluster = await startFencer([
      'cluster',
      '--insecure',
      '--data',
      data,
      '--sink-listen',
      '127.0.0.1:0',
      '--coordinator-listen',
      '127.0.0.1:0',
      '--sinks',
      '2',
    ]);
    const ready = cluster.ready as unknown as ShardedReady;
    const client = coordinatorClient(ready.links.workersToCoordinator);
    try {
      expect(ready.sinks.map(({ name }) => name)).toEqual(['sink-1', 'sink-2']);
      // Each list is a worker's --sink value as it is (P3).
      expect(ready.sink).toBe(ready.sinks.map(({ address }) => address).join(','));
      expect(ready.links.workersToSink).toBe(ready.sinks.map(({ links }) => links.workersToSink).join(','));
      expect(Object.keys(ready.pids).sort()).toEqual(['coordinator', 'sink-1', 'sink-2', 'toxiproxy']);
      for (const name of ['sink-1', 'sink-2']) expect(existsSync(join(data, name))).toBe(true);

      const proxies = await new Toxiproxy(ready.toxiproxy).getAll();
      expect(Object.fromEntries(Object.values(proxies).map((p) => [p.name, [p.listen, p.upstream]]))).toEqual({
        workers_to_coordinator: [ready.links.workersToCoordinator, ready.coordinator],
        ...Object.fromEntries(
          ready.sinks.flatMap(({ address, links, proxyNames }) => [
            [proxyNames.workersToSink, [links.workersToSink, address]],
            [proxyNames.coordinatorToSink, [links.coordinatorToSink, address]],
          ]),
        ),
      });

      // Each grant names the sink that owns its resource (P3), by the name the cluster gave it.
      const api = coordinatorApi(client);
      const ownerOf = new Map<string, string>();
      for (const resource of RESOURCES) {
        const { lease } = ok(await api.acquire(acquire(resource)));
        const owner = ready.sinks.find(({ name }) => name === lease!.sink!.name)!;
        expect(lease!.sink!.address).toBe(owner.links.coordinatorToSink);
        ownerOf.set(resource, owner.name);
        expect(
          ok(await api.release({ resource, token: lease!.token, owner_id: 'worker-a', incarnation: '1' })).released,
        ).toBe(true);
      }
      expect(new Set(ownerOf.values())).toEqual(new Set(['sink-1', 'sink-2']));

      // sink-2 cut off from the coordinator: its resources cannot be granted (L3), sink-1's still are.
      const cut = proxies[ready.sinks[1]!.proxyNames.coordinatorToSink]!;
      await cut.update({ enabled: false, listen: cut.listen, upstream: cut.upstream });
      for (const resource of RESOURCES) {
        const again = { ...acquire(resource), request_id: `again-${resource}` };
        if (ownerOf.get(resource) === 'sink-2')
          expect(refused(await api.acquire(again)).reason).toBe('SINK_UNAVAILABLE');
        else expect(BigInt(ok(await api.acquire(again)).lease!.token)).toBeGreaterThan(1n);
      }
    } finally {
      client.close();
      await stopFencer(cluster);
    }
  });

  it('refuses sinks and a coordinator on one port before anything starts', async () => {
    const data = join(dir.path, 'clash');
    const { code, stderr } = await runFencer([
      'cluster',
      '--sinks',
      '2',
      '--sink-listen',
      '127.0.0.1:50042',
      '--coordinator-listen',
      '127.0.0.1:50052',
      '--data',
      data,
    ]);
    expect([code, stderr.trim()]).toEqual([
      1,
      'error: the sink-2 and the coordinator would both listen on 127.0.0.1:50052: give them other addresses',
    ]);
    expect(existsSync(data)).toBe(false);
  });

  it('rejects a count that is not a positive integer with one line and exit 1', async () => {
    const { code, stderr } = await runFencer(['cluster', '--sinks', '0']);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('--sinks');
  });
});
