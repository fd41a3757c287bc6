// gRPC between real `fencer` processes through a real `fencer toxiproxy`
// process, driven only through toxiproxy-node-client: a lost grant receipt
// (R1, L3) and a proxy that goes away and comes back. Every wait is a
// bounded poll or a call's own deadline, never a sleep.
import * as grpc from '@grpc/grpc-js';
import { Toxiproxy, type Proxy } from 'toxiproxy-node-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  remoteFailure,
  unaryCall,
  type AcquireResponse__Output,
  type CoordinatorClient,
  type DescribeResponse__Output,
} from '@fencer/proto';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  eventually,
  ok,
  refused,
  sinkApi,
  sinkClient,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';

const TTL_MS = '60000'; // long enough that nothing here can see a lease run out
const HELD_DEADLINE_MS = 1_500;

const dir = tempDir('fencer-grpc-proxy-');
const children: FencerProcess[] = [];
const clients: grpc.Client[] = [];
let sink: FencerProcess;
let coordinator: FencerProcess;
let toxiproxy: Toxiproxy;
let proxyCount = 0;

beforeAll(async () => {
  sink = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', `${dir.path}/sink`]);
  children.push(sink);
  coordinator = await startFencer([
    'coordinator',
    '--insecure',
    '--listen',
    '127.0.0.1:0',
    '--data',
    `${dir.path}/coordinator`,
    '--sink',
    sink.address,
  ]);
  children.push(coordinator);
  const proxyProcess = await startFencer(['toxiproxy', '--listen', '127.0.0.1:0']);
  children.push(proxyProcess);
  toxiproxy = new Toxiproxy(`http://${proxyProcess.address}`);
});

afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.all(children.map((child) => stopFencer(child, 2_000)));
  dir.remove();
});

/** A fresh proxy in front of the coordinator on 127.0.0.1:0, and a client that talks through it. */
async function coordinatorBehindProxy(): Promise<{ proxy: Proxy; client: CoordinatorClient }> {
  const proxy = await toxiproxy.createProxy({
    name: `coordinator-${++proxyCount}`,
    listen: '127.0.0.1:0',
    upstream: coordinator.address,
  });
  expect(proxy.listen).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
  expect(proxy.listen).not.toBe(coordinator.address);
  // Short reconnect backoff: after the proxy comes back, the client's next
  // attempt is a fraction of a second away, so the bounded polls stay short.
  const client = coordinatorClient(proxy.listen, {
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.min_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 500,
  });
  clients.push(client);
  return { proxy, client };
}

const acquireRequest = (requestId: string, resource: string) => ({
  request_id: requestId,
  resource,
  owner_id: 'worker-a',
  incarnation: '1',
  ttl_ms: TTL_MS,
});

/** A Describe with its own short deadline, resolving to the gRPC code it ended with (OK is 0). */
async function describeCode(client: CoordinatorClient, resource: string, timeoutMs = 2_000): Promise<number> {
  try {
    const request = { resource };
    await unaryCall<typeof request, DescribeResponse__Output>(client, client.Describe, request, { timeoutMs });
    return CODE.OK;
  } catch (error) {
    return remoteFailure(error as grpc.ServiceError).code;
  }
}

describe('gRPC through fencer toxiproxy', () => {
  it('R1/L3: an Acquire whose reply is held still grants; the retry with the same request_id replays it and the fence moves once', async () => {
    const { proxy, client } = await coordinatorBehindProxy();
    const proxied = coordinatorApi(client);
    const directClient = coordinatorClient(coordinator.address);
    const directSink = sinkClient(sink.address);
    clients.push(directClient, directSink);
    const direct = coordinatorApi(directClient);
    const sinkSide = sinkApi(directSink);
    const resource = 'held-receipt';

    // The path works before the fault: a grant on another resource answers through the proxy.
    const warmUp = ok(await proxied.acquire(acquireRequest('warm-up', 'warm-up')));
    expect(warmUp).toMatchObject({ replayed: false, lease: { owner_id: 'worker-a' } });
    expect(await sinkSide.fence(resource)).toBe('0');

    // timeout 0 on the downstream: the coordinator's replies are swallowed, the connection stays open.
    const held = await proxy.addToxic({
      name: 'hold-replies',
      type: 'timeout',
      stream: 'downstream',
      toxicity: 1,
      attributes: { timeout: 0 },
    });
    expect((await proxy.getToxic('hold-replies')).attributes).toEqual({ timeout: 0 });

    const request = acquireRequest('acquire-held-1', resource);
    const startedMs = performance.now();
    let lost: unknown;
    try {
      lost = await unaryCall<typeof request, AcquireResponse__Output>(client, client.Acquire, request, {
        timeoutMs: HELD_DEADLINE_MS,
      });
    } catch (error) {
      lost = remoteFailure(error as grpc.ServiceError);
    }
    expect(lost).toMatchObject({ code: CODE.DEADLINE_EXCEEDED });
    // It was the deadline that ended it, not an early failure of the path.
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(HELD_DEADLINE_MS - 50);

    // Yet the coordinator granted it (L3): seen directly, bypassing the proxy.
    const granted = await eventually(
      async () => {
        const described = ok(await direct.describe(resource));
        return described.lease ? described : undefined;
      },
      { timeoutMs: 5_000, what: 'the held Acquire to be granted' },
    );
    expect(granted.lease).toMatchObject({ owner_id: 'worker-a', incarnation: '1' });
    const token = granted.lease!.token;
    expect(granted.last_token).toBe(token);
    expect(await sinkSide.fence(resource)).toBe(token);

    // The receipt is lost for good: removing a timeout toxic closes the
    // connection it held (as Toxiproxy does), so the client reconnects.
    await held.remove();
    expect(
      await proxy.getToxic('hold-replies').then(
        () => 'present',
        () => 'gone',
      ),
    ).toBe('gone');
    await eventually(
      () => (client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY ? undefined : true),
      { timeoutMs: 5_000, what: 'the held connection to be closed' },
    );

    // R1: the retry with the same request_id through the healed proxy gets the recorded grant.
    const retry = ok(await proxied.acquire(request));
    expect(retry.replayed).toBe(true);
    expect(retry.lease).toMatchObject({ token, owner_id: 'worker-a', incarnation: '1' });
    // The fence moved exactly once: from 0 to the one token, and no second token was minted.
    expect(await sinkSide.fence(resource)).toBe(token);
    expect(ok(await direct.describe(resource)).last_token).toBe(token);
    // The grant the lost reply carried is live: another owner is refused while it lasts (L2).
    const other = { ...acquireRequest('acquire-held-2', resource), owner_id: 'worker-b' };
    expect(refused(await proxied.acquire(other)).reason).toBe('LEASE_HELD');
    await proxy.remove();
  });

  it('a disabled proxy fails the in-flight and the next call UNAVAILABLE; re-enabling it heals the path', async () => {
    const { proxy, client } = await coordinatorBehindProxy();
    const resource = 'proxy-down';
    expect(await describeCode(client, resource)).toBe(CODE.OK);

    // A call held in flight by a long downstream latency when the proxy goes down.
    await proxy.addToxic({
      name: 'slow-replies',
      type: 'latency',
      stream: 'downstream',
      toxicity: 1,
      attributes: { latency: 20_000, jitter: 0 },
    });
    const inFlight = describeCode(client, resource, 8_000);
    const down = await proxy.update({ enabled: false, listen: proxy.listen, upstream: proxy.upstream });
    expect(down.enabled).toBe(false);
    expect(await inFlight).toBe(CODE.UNAVAILABLE);

    // Nothing listens now: the next call is refused at connect.
    expect(await describeCode(client, resource)).toBe(CODE.UNAVAILABLE);
    expect((await toxiproxy.get(proxy.name)).enabled).toBe(false);

    await (await proxy.getToxic('slow-replies')).remove();
    const up = await proxy.update({ enabled: true, listen: proxy.listen, upstream: proxy.upstream });
    expect(up).toMatchObject({ enabled: true, listen: proxy.listen });
    // The client's reconnect backoff decides when it tries again; the first OK ends the poll.
    await eventually(async () => ((await describeCode(client, resource)) === CODE.OK ? true : undefined), {
      timeoutMs: 10_000,
      what: 'a call through the re-enabled proxy to succeed',
    });
    await proxy.remove();
  });

  it('reset_peer cuts the call UNAVAILABLE; removing the toxic heals the path', async () => {
    const { proxy, client } = await coordinatorBehindProxy();
    const resource = 'proxy-reset';
    expect(await describeCode(client, resource)).toBe(CODE.OK);

    // Upstream: the next bytes the client sends are dropped and the connection is cut at once.
    const reset = await proxy.addToxic({
      name: 'reset',
      type: 'reset_peer',
      stream: 'upstream',
      toxicity: 1,
      attributes: { timeout: 0 },
    });
    expect(await describeCode(client, resource, 5_000)).toBe(CODE.UNAVAILABLE);

    await reset.remove();
    await eventually(async () => ((await describeCode(client, resource)) === CODE.OK ? true : undefined), {
      timeoutMs: 10_000,
      what: 'a call through the proxy to succeed once reset_peer is gone',
    });
    await proxy.remove();
  });
});
