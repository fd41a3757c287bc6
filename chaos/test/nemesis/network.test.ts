// The network nemeses against a real cluster (sink, coordinator and fault
// proxy as processes), each judged from outside: what a caller through the
// link sees while the fault is on, what the server really did (read
// directly, around the proxy), and that heal() gives the service back.
// TOXIPROXY_URL runs the same tests against a real Toxiproxy 2.x.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  remoteFailure,
  unaryCall,
  type AcquireResponse__Output,
  type CoordinatorClient,
  type DescribeResponse__Output,
} from '@fencer/proto';
import { startCluster, type Cluster, type ClusterLink } from '@fencer/supervisor';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  eventually,
  ok,
  readOrMissing,
  refused,
  sinkCalls,
  tempDir,
  type SinkCalls,
} from '@fencer/testkit';
import {
  blackhole,
  clusterLink,
  connectionReset,
  flap,
  isolate,
  latencySpike,
  partition,
  replyLoss,
  requestLoss,
  type Nemesis,
} from '../../src/index.js';

// Short reconnect backoff: after a heal the next attempt is a fraction of a
// second away, so the bounded polls stay short.
const CHANNEL: grpc.ClientOptions = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.min_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 500,
};
const DEADLINE_MS = 800;
const HEALED = { timeoutMs: 10_000, intervalMs: 100 };

const dir = tempDir('fencer-nemesis-network-');
let cluster: Cluster;
const closers: (() => void)[] = [];
const nemeses: Nemesis[] = [];

beforeAll(async () => {
  const toxiproxyUrl = process.env.TOXIPROXY_URL;
  cluster = await startCluster({
    data: dir.path,
    sinkListen: '127.0.0.1:0',
    coordinatorListen: '127.0.0.1:0',
    insecure: true,
    stopGraceMs: 2_000,
    ...(toxiproxyUrl ? { toxiproxyUrl } : {}),
  });
});

afterAll(async () => {
  // A failed test must not leave its fault on for the next one's cluster stop.
  await Promise.allSettled(nemeses.map((nemesis) => nemesis.heal()));
  for (const close of closers) close();
  await cluster?.stop();
  dir.remove();
});

/** Remembers a nemesis so afterAll heals it whatever happens. */
function tracked<T extends Nemesis>(nemesis: T): T {
  nemeses.push(nemesis);
  return nemesis;
}

function coordinatorAt(address: string): CoordinatorClient {
  const client = coordinatorClient(address, CHANNEL);
  closers.push(() => client.close());
  return client;
}

function sinkAt(address: string, timeoutMs = DEADLINE_MS): SinkCalls {
  const calls = sinkCalls(address, undefined, { timeoutMs, channel: CHANNEL });
  closers.push(calls.close);
  return calls;
}

/** How a call ended: its gRPC code (OK is 0) and how long it took, ms. */
async function ended(pending: Promise<unknown>): Promise<{ code: number; ms: number }> {
  const startMs = performance.now();
  try {
    await pending;
    return { code: CODE.OK, ms: performance.now() - startMs };
  } catch (error) {
    return { code: remoteFailure(error as grpc.ServiceError).code, ms: performance.now() - startMs };
  }
}

function describeCall(client: CoordinatorClient, resource: string, timeoutMs = DEADLINE_MS) {
  const request = { resource };
  return unaryCall<typeof request, DescribeResponse__Output>(client, client.Describe, request, { timeoutMs });
}

/** A lease on `resource` from the coordinator directly: the token workers write with. */
async function tokenFor(resource: string): Promise<string> {
  const direct = coordinatorApi(coordinatorAt(cluster.coordinator.ready.address));
  const granted = ok(
    await direct.acquire({
      request_id: `token-${resource}`,
      resource,
      owner_id: 'worker-a',
      incarnation: '1',
      ttl_ms: '60000',
    }),
  );
  return granted.lease!.token;
}

const write = (resource: string, token: string, resultId: string) => ({
  resource,
  token,
  result_id: resultId,
  payload: Buffer.from(`payload of ${resultId}`),
});

/** The toxics on a link's proxy, as the Toxiproxy API lists them. */
async function toxicsOn(link: ClusterLink): Promise<{ type: string; stream: string; attributes: object }[]> {
  const response = await fetch(`${cluster.toxiproxy.url}/proxies/${cluster.proxyNames[link]}/toxics`);
  return (await response.json()) as { type: string; stream: string; attributes: object }[];
}

describe('network nemeses', () => {
  it('partition: an Acquire through the link fails fast; heal, and the same request goes through', async () => {
    const proxied = coordinatorAt(cluster.links.workersToCoordinator);
    expect((await ended(describeCall(proxied, 'partitioned'))).code).toBe(CODE.OK);
    const nemesis = tracked(partition(clusterLink(cluster, 'workersToCoordinator')));
    await nemesis.start();
    expect((await clusterLink(cluster, 'workersToCoordinator').toxiproxy.get('workers_to_coordinator')).enabled).toBe(
      false,
    );

    const request = {
      request_id: 'partitioned-1',
      resource: 'partitioned',
      owner_id: 'worker-a',
      incarnation: '1',
      ttl_ms: '60000',
    };
    const acquire = () => unaryCall(proxied, proxied.Acquire, request, { timeoutMs: DEADLINE_MS });
    const cut = await ended(acquire());
    expect([CODE.UNAVAILABLE, CODE.DEADLINE_EXCEEDED]).toContain(cut.code);

    const record = await nemesis.heal();
    expect(record).toMatchObject({ name: 'partition', link: 'workers_to_coordinator', detail: expect.any(String) });
    expect(await nemesis.heal()).toBe(record);
    await eventually(async () => ((await ended(acquire())).code === CODE.OK ? true : undefined), {
      ...HEALED,
      what: 'the Acquire through the healed link',
    });
  });

  it('blackhole: a Write through the link meets only its deadline and never reaches the sink', async () => {
    const resource = 'blackholed';
    const token = await tokenFor(resource);
    const proxied = sinkAt(cluster.links.workersToSink);
    const direct = sinkAt(cluster.sink.ready.address);
    expect(await proxied.getFence(resource)).toMatchObject({ fence: token });
    const nemesis = tracked(blackhole(clusterLink(cluster, 'workersToSink')));
    await nemesis.start();

    const lost = await ended(proxied.write(write(resource, token, 'bh-1')));
    expect(lost.code).toBe(CODE.DEADLINE_EXCEEDED);
    expect(lost.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(await readOrMissing(direct, resource, 'bh-1')).toBeUndefined();

    expect(await nemesis.heal()).toMatchObject({ name: 'blackhole', link: 'workers_to_sink' });
    expect(await toxicsOn('workersToSink')).toEqual([]);
    // APPLIED, not REPLAYED: the first attempt was dropped on the way in.
    const retried = await eventually(() => proxied.write(write(resource, token, 'bh-1')).catch(() => undefined), {
      ...HEALED,
      what: 'a Write through the healed link',
    });
    expect(retried.outcome).toBe('APPLIED');
  });

  it('reply loss: a Write through the link times out at the client, yet the sink applied it', async () => {
    const resource = 'reply-lost';
    const token = await tokenFor(resource);
    const warm = sinkAt(cluster.links.workersToSink);
    const direct = sinkAt(cluster.sink.ready.address);
    expect(await warm.getFence(resource)).toMatchObject({ fence: token });
    const nemesis = tracked(replyLoss(clusterLink(cluster, 'workersToSink')));
    await nemesis.start();
    expect(await toxicsOn('workersToSink')).toEqual([
      expect.objectContaining({ type: 'timeout', stream: 'downstream', attributes: { timeout: 0 } }),
    ]);

    // On a connection that was open before the fault, and on one opened under it.
    const fresh = sinkAt(cluster.links.workersToSink);
    const [onWarm, onFresh] = await Promise.all([
      ended(warm.write(write(resource, token, 'rl-warm'))),
      ended(fresh.write(write(resource, token, 'rl-fresh'))),
    ]);
    for (const lost of [onWarm, onFresh]) {
      expect(lost.code).toBe(CODE.DEADLINE_EXCEEDED);
      expect(lost.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    }
    for (const resultId of ['rl-warm', 'rl-fresh']) {
      expect(await readOrMissing(direct, resource, resultId)).toEqual({
        token,
        payload: Buffer.from(`payload of ${resultId}`),
      });
    }

    expect(await nemesis.heal()).toMatchObject({ name: 'reply-loss', link: 'workers_to_sink' });
    const retried = await eventually(() => warm.write(write(resource, token, 'rl-warm')).catch(() => undefined), {
      ...HEALED,
      what: 'a Write through the healed link',
    });
    expect(retried.outcome).toBe('REPLAYED');
  });

  it('request loss: an Acquire through the link never reaches the coordinator; heal, and the same request is granted once', async () => {
    const resource = 'request-lost';
    const proxied = coordinatorAt(cluster.links.workersToCoordinator);
    const direct = coordinatorApi(coordinatorAt(cluster.coordinator.ready.address));
    expect((await ended(describeCall(proxied, resource))).code).toBe(CODE.OK);
    const nemesis = tracked(requestLoss(clusterLink(cluster, 'workersToCoordinator')));
    await nemesis.start();
    expect(await toxicsOn('workersToCoordinator')).toEqual([
      expect.objectContaining({ type: 'timeout', stream: 'upstream', attributes: { timeout: 0 } }),
    ]);

    const request = { request_id: 'rq-1', resource, owner_id: 'worker-a', incarnation: '1', ttl_ms: '60000' };
    const acquire = () =>
      unaryCall<typeof request, AcquireResponse__Output>(proxied, proxied.Acquire, request, { timeoutMs: DEADLINE_MS });
    const lost = await ended(acquire());
    expect(lost.code).toBe(CODE.DEADLINE_EXCEEDED);
    expect(lost.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    // Nothing was granted, not even a token burned: the request never arrived.
    expect(ok(await direct.describe(resource))).toMatchObject({ lease: null, last_token: '0' });

    expect(await nemesis.heal()).toMatchObject({ name: 'request-loss', link: 'workers_to_coordinator' });
    expect(await toxicsOn('workersToCoordinator')).toEqual([]);
    // A first grant, not a replay (R1): the lost attempt left nothing behind.
    const granted = await eventually(() => acquire().catch(() => undefined), {
      ...HEALED,
      what: 'the Acquire through the healed link',
    });
    expect(granted.replayed).toBe(false);
    expect(ok(await direct.describe(resource)).last_token).toBe(granted.lease!.token);
  });

  it('isolation: every link of the coordinator is cut at once, while the sink goes on; heal, and both answer', async () => {
    const resource = 'isolated';
    const proxied = coordinatorAt(cluster.links.workersToCoordinator);
    const direct = coordinatorApi(coordinatorAt(cluster.coordinator.ready.address));
    const sinkThroughProxy = sinkAt(cluster.links.workersToSink);
    expect((await ended(describeCall(proxied, resource))).code).toBe(CODE.OK);
    expect((await ended(sinkThroughProxy.getFence(resource))).code).toBe(CODE.OK);
    const nemesis = tracked(
      isolate('coordinator', [clusterLink(cluster, 'workersToCoordinator'), clusterLink(cluster, 'coordinatorToSink')]),
    );
    await nemesis.start();
    for (const link of ['workersToCoordinator', 'coordinatorToSink'] as const) {
      expect((await toxicsOn(link)).map((toxic) => `${toxic.type} ${toxic.stream}`).sort(), link).toEqual([
        'timeout downstream',
        'timeout upstream',
      ]);
    }
    expect(await toxicsOn('workersToSink')).toEqual([]);

    // Workers cannot reach it, and it cannot reach the sink to make a fence durable (L3).
    expect((await ended(describeCall(proxied, resource))).code).toBe(CODE.DEADLINE_EXCEEDED);
    const request = { request_id: 'iso-1', resource, owner_id: 'worker-a', incarnation: '1', ttl_ms: '60000' };
    expect(refused(await direct.acquire(request)).reason).toBe('SINK_UNAVAILABLE');
    // The sink, not isolated, still answers its workers.
    expect(await sinkThroughProxy.getFence(resource)).toMatchObject({ fence: '0' });

    expect(await nemesis.heal()).toMatchObject({ name: 'isolate', process: 'coordinator' });
    for (const link of ['workersToCoordinator', 'coordinatorToSink'] as const) expect(await toxicsOn(link)).toEqual([]);
    await eventually(async () => ((await ended(describeCall(proxied, resource))).code === CODE.OK ? true : undefined), {
      ...HEALED,
      what: 'a call through the healed link',
    });
    const granted = await eventually(
      async () => {
        const result = await direct.acquire(request);
        return result.ok ? result.value : undefined;
      },
      { ...HEALED, what: 'a grant once the coordinator reaches the sink again' },
    );
    expect(await sinkThroughProxy.getFence(resource)).toMatchObject({ fence: granted.lease!.token });
  });

  it('flapping: the link goes off and on, faster than a TTL, until heal() leaves it on', async () => {
    const link = clusterLink(cluster, 'workersToCoordinator');
    const enabled = async () => (await link.toxiproxy.get(link.proxy)).enabled;
    const downMs = 150;
    const upMs = 150;
    const nemesis = tracked(flap(link, { downMs, upMs }));
    await nemesis.start();
    expect(await enabled()).toBe(false);

    // Sampled every 25 ms, the flag turns over and over within a bounded wait.
    const seen: boolean[] = [];
    await eventually(
      async () => {
        const now = await enabled();
        if (seen.at(-1) !== now) seen.push(now);
        return seen.length >= 5 ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 25, what: 'five turns of the flapping link' },
    );
    expect(seen.slice(0, 5)).toEqual([false, true, false, true, false]);

    const record = await nemesis.heal();
    expect(record).toMatchObject({ name: 'flap', link: 'workers_to_coordinator' });
    expect(Number(/(\d+) partitions/.exec(record!.detail)?.[1])).toBeGreaterThanOrEqual(3);
    // On for good: still on after more than a whole period.
    expect(await enabled()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2 * (downMs + upMs)));
    expect(await enabled()).toBe(true);
    const proxied = coordinatorAt(cluster.links.workersToCoordinator);
    await eventually(
      async () => ((await ended(describeCall(proxied, 'flapped'))).code === CODE.OK ? true : undefined),
      {
        ...HEALED,
        what: 'a call through the link once flapping stopped',
      },
    );
  });

  it('latency longer than a TTL: the grant arrives after its lease has expired; heal, and calls succeed', async () => {
    const latencyMs = 700;
    const proxied = coordinatorAt(cluster.links.workersToCoordinator);
    const direct = coordinatorApi(coordinatorAt(cluster.coordinator.ready.address));
    expect((await ended(describeCall(proxied, 'slow'))).code).toBe(CODE.OK);
    const nemesis = tracked(
      latencySpike(clusterLink(cluster, 'workersToCoordinator'), { latencyMs, direction: 'downstream' }),
    );
    await nemesis.start();
    expect(await toxicsOn('workersToCoordinator')).toEqual([
      expect.objectContaining({ type: 'latency', stream: 'downstream', attributes: { latency: latencyMs, jitter: 0 } }),
    ]);

    const request = { request_id: 'slow-1', resource: 'slow', owner_id: 'worker-a', incarnation: '1', ttl_ms: '300' };
    const startMs = performance.now();
    const granted = await unaryCall<typeof request, AcquireResponse__Output>(proxied, proxied.Acquire, request, {
      timeoutMs: 5_000,
    });
    expect(performance.now() - startMs).toBeGreaterThanOrEqual(latencyMs - 20);
    // By the time its holder heard of the 300 ms lease, the coordinator had let it go.
    const described = ok(await direct.describe('slow'));
    expect(described.lease).toBeNull();
    expect(described.last_token).toBe(granted.lease!.token);

    expect(await nemesis.heal()).toMatchObject({ name: 'latency', link: 'workers_to_coordinator' });
    expect(await toxicsOn('workersToCoordinator')).toEqual([]);
    // That a removed latency toxic stops delaying an open connection is the proxy's own test (toxics.test.ts).
    expect((await ended(describeCall(proxied, 'slow', 5_000))).code).toBe(CODE.OK);
  });

  it('connection reset: a call through the link is cut UNAVAILABLE; heal, and calls succeed', async () => {
    const proxied = coordinatorAt(cluster.links.workersToCoordinator);
    expect((await ended(describeCall(proxied, 'reset'))).code).toBe(CODE.OK);
    const nemesis = tracked(connectionReset(clusterLink(cluster, 'workersToCoordinator')));
    await nemesis.start();
    expect((await ended(describeCall(proxied, 'reset', 5_000))).code).toBe(CODE.UNAVAILABLE);

    expect(await nemesis.heal()).toMatchObject({ name: 'reset-peer', link: 'workers_to_coordinator' });
    await eventually(async () => ((await ended(describeCall(proxied, 'reset'))).code === CODE.OK ? true : undefined), {
      ...HEALED,
      what: 'a call through the link once reset_peer is gone',
    });
  });

  it('faults on one link stack, and each heal takes back only its own', async () => {
    const latencyMs = 300;
    const proxied = sinkAt(cluster.links.workersToSink, 5_000);
    const quick = sinkAt(cluster.links.workersToSink, DEADLINE_MS);
    expect((await ended(proxied.getFence('stacked'))).code).toBe(CODE.OK);
    const slow = tracked(latencySpike(clusterLink(cluster, 'workersToSink'), { latencyMs }));
    const lossy = tracked(replyLoss(clusterLink(cluster, 'workersToSink')));
    await slow.start();
    await lossy.start();
    expect((await toxicsOn('workersToSink')).map((toxic) => `${toxic.type} ${toxic.stream}`).sort()).toEqual([
      'latency downstream',
      'latency upstream',
      'timeout downstream',
    ]);
    expect((await ended(quick.getFence('stacked'))).code).toBe(CODE.DEADLINE_EXCEEDED);

    await lossy.heal();
    // Replies come back, a latency in each direction later.
    const slowed = await eventually(
      async () => {
        const result = await ended(proxied.getFence('stacked'));
        return result.code === CODE.OK ? result : undefined;
      },
      { ...HEALED, what: 'a reply through the still slow link' },
    );
    expect(slowed.ms).toBeGreaterThanOrEqual(2 * latencyMs - 20);

    await slow.heal();
    expect(await toxicsOn('workersToSink')).toEqual([]);
    expect(await ended(proxied.getFence('stacked'))).toMatchObject({ code: CODE.OK });
  });
});
