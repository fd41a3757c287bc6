// nemesisFor: every kind the schedule can plan, on every default target,
// becomes a nemesis of that kind on that target (nothing is injected until
// start, so a stand-in cluster is enough); a target it cannot act on is an
// error, not a fault on something else.
import { describe, expect, it } from 'vitest';
import { Toxiproxy } from 'toxiproxy-node-client';
import { silentLogger } from '@fencer/server-kit';
import { LINK_PROXY_NAMES, type Cluster } from '@fencer/supervisor';
import { startToxiproxy } from '@fencer/toxiproxy';
import { DEFAULT_TARGETS, NEMESIS_KINDS, nemesisFor, type FaketimeClock, type NemesisKind } from './index.js';

const pids: Record<string, number> = { sink: 101, coordinator: 102, 'sink-1': 103, 'sink-2': 104 };
const cluster = {
  toxiproxy: { url: 'http://127.0.0.1:1', child: null },
  proxyNames: LINK_PROXY_NAMES,
  sinks: [{ name: 'sink', proxyNames: { workersToSink: 'workers_to_sink', coordinatorToSink: 'coordinator_to_sink' } }],
  replicas: [],
  pidOf: (target: string) => pids[target],
} as unknown as Cluster;
/** The same with two sinks sharded by resource. */
const sharded = {
  ...cluster,
  sinks: [1, 2].map((n) => ({
    name: `sink-${n}`,
    proxyNames: { workersToSink: `workers_to_sink_${n}`, coordinatorToSink: `coordinator_to_sink_${n}` },
  })),
} as unknown as Cluster;
// A clock is only used once the fault starts.
const settings = {
  latencyMs: 1_500,
  pids: { 'worker-a': 201 },
  clocks: { coordinator: {} as FaketimeClock },
  clockRate: 4,
};

const NETWORK: readonly NemesisKind[] = [
  'partition',
  'blackhole',
  'reply-loss',
  'request-loss',
  'latency',
  'reset-peer',
  'flap',
];

describe('nemesisFor', () => {
  it.each(NEMESIS_KINDS.flatMap((kind) => DEFAULT_TARGETS[kind].map((target) => [kind, target] as const)))(
    '%s on %s',
    (kind, target) => {
      const nemesis = nemesisFor(cluster, { kind, target }, settings);
      expect(nemesis.kind).toBe(kind);
      expect(nemesis.target).toEqual(NETWORK.includes(kind) ? { link: target } : { process: target });
    },
  );

  it('acts on a link the settings name besides the cluster’s own (a worker’s own proxy)', () => {
    const link = { toxiproxy: new Toxiproxy('http://127.0.0.1:1'), proxy: 'worker-a_to_sink' };
    const nemesis = nemesisFor(
      cluster,
      { kind: 'reply-loss', target: 'worker-a_to_sink' },
      { ...settings, links: { 'worker-a_to_sink': link } },
    );
    expect(nemesis.target).toEqual({ link: 'worker-a_to_sink' });
  });

  it('isolates a worker on the links the settings give for its name', () => {
    const toxiproxy = new Toxiproxy('http://127.0.0.1:1');
    const links = [
      { toxiproxy, proxy: 'worker-a_to_coordinator' },
      { toxiproxy, proxy: 'worker-a_to_sink' },
    ];
    const nemesis = nemesisFor(
      cluster,
      { kind: 'isolate', target: 'worker-a' },
      { ...settings, linksOf: { 'worker-a': links } },
    );
    expect(nemesis.target).toEqual({ process: 'worker-a' });
  });

  it('acts on one sink of several: its own process, and its own links for isolation', async () => {
    expect(nemesisFor(sharded, { kind: 'pause', target: 'sink-2' }, settings).target).toEqual({ process: 'sink-2' });
    expect(nemesisFor(sharded, { kind: 'crash', target: 'sink-2' }, settings).target).toEqual({ process: 'sink-2' });
    const proxy = await startToxiproxy({ listen: '127.0.0.1:0', log: silentLogger });
    try {
      const url = `http://${proxy.address}`;
      const toxiproxy = new Toxiproxy(url);
      const names = ['workers_to_sink_1', 'coordinator_to_sink_1', 'workers_to_sink_2', 'coordinator_to_sink_2'];
      await toxiproxy.populate(
        names.map((name) => ({ name, listen: '127.0.0.1:0', upstream: '127.0.0.1:9', enabled: true })),
      );
      const isolated = nemesisFor(
        { ...sharded, toxiproxy: { url, child: null } },
        { kind: 'isolate', target: 'sink-2' },
        settings,
      );
      await isolated.start();
      const toxics = async () =>
        Object.fromEntries(
          await Promise.all(
            names.map(async (name) => [
              name,
              ((await (await fetch(`${url}/proxies/${name}/toxics`)).json()) as []).length,
            ]),
          ),
        );
      // Both ways cut on sink-2's two links, nothing on sink-1's.
      expect(await toxics()).toEqual({
        workers_to_sink_1: 0,
        coordinator_to_sink_1: 0,
        workers_to_sink_2: 2,
        coordinator_to_sink_2: 2,
      });
      await isolated.heal();
      expect(Object.values(await toxics())).toEqual([0, 0, 0, 0]);
    } finally {
      await proxy.stop();
    }
  });

  it('pauses a worker by the pid the settings give for its name', () => {
    expect(nemesisFor(cluster, { kind: 'pause', target: 'worker-a' }, settings).target).toEqual({
      process: 'worker-a',
    });
  });

  it.each<[NemesisKind, string, string]>([
    ['partition', 'sink', 'no cluster link has the proxy sink'],
    ['latency', 'workersToSink', 'no cluster link has the proxy workersToSink'],
    ['pause', 'worker-z', 'pause: no pid for worker-z'],
    ['crash', 'toxiproxy', 'crash: toxiproxy is not a service'],
    ['crash-wipe', 'workers_to_sink', 'crash-wipe: workers_to_sink is not a service'],
    ['isolate', 'worker-z', 'isolate: worker-z has no links'],
    ['clock-skew', 'sink', 'clock-skew: sink runs on no fake clock'],
    ['cut-from-etcd', 'sink', 'cut-from-etcd: sink is not a replica'],
    ['kill-etcd', 'coordinator', 'kill-etcd: coordinator is not an etcd member'],
  ])('refuses %s on %s', (kind, target, message) => {
    expect(() => nemesisFor(cluster, { kind, target }, settings)).toThrow(new RangeError(message));
  });

  it('refuses clock-skew without a rate to set', () => {
    const { clockRate: _, ...rateless } = settings;
    expect(() => nemesisFor(cluster, { kind: 'clock-skew', target: 'coordinator' }, rateless)).toThrow(
      new RangeError('clock-skew: no clockRate in the settings'),
    );
  });
});
