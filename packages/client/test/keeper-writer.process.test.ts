// The lease keeper and the fenced writer against a real secured cluster
// (sink, coordinator and fault proxy as separate processes): renewals keep a
// lease past its TTL, retries keep their request id and result id through
// dropped replies (R1, F3), a refused or unrenewable lease fires the signal,
// and a stale write is refused by the sink, not by the library (F1).
import { Toxiproxy, type Proxy } from 'toxiproxy-node-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialToken, type Cluster, type ClusterLink } from '@fencer/supervisor';
import { eventually, startTestCluster } from '@fencer/testkit';
import {
  CoordinatorConnection,
  FencedWriter,
  LeaseKeeper,
  LeaseLostError,
  ResultConflictError,
  SinkConnection,
  UnavailableError,
  type CallObserver,
  type SentCall,
} from '../src/index.js';

const FAST_RETRY = { initialMs: 20, maxMs: 200, multiplier: 2, maxAttempts: 30 };

let cluster: Cluster;
let stopCluster: () => Promise<void>;
let toxiproxy: Toxiproxy;
const opened: { close(): void }[] = [];

beforeAll(async () => {
  ({ cluster, stop: stopCluster } = await startTestCluster('fencer-client-keeper-'));
  toxiproxy = new Toxiproxy(cluster.toxiproxy.url);
});

afterAll(async () => {
  for (const connection of opened) connection.close();
  await stopCluster?.();
});

const tokenOf = (identity: string) => credentialToken(cluster.credentials!.credentialsFile, { identity });

/** Connections as worker `identity`, through the proxies (or straight to the services with `direct`). */
function connect(
  identity: string,
  options: { direct?: boolean; observer?: CallObserver; callTimeoutMs?: number; writeStream?: boolean } = {},
) {
  const common = {
    token: tokenOf(identity),
    callTimeoutMs: options.callTimeoutMs ?? 1_000,
    ...(options.observer ? { observer: options.observer } : {}),
  };
  const coordinator = new CoordinatorConnection({
    address: options.direct ? cluster.coordinator.ready.address : cluster.links.workersToCoordinator,
    ...common,
  });
  const sink = new SinkConnection({
    address: options.direct ? cluster.sink.ready.address : cluster.links.workersToSink,
    ...common,
    ...(options.writeStream === undefined ? {} : { writeStream: options.writeStream }),
  });
  opened.push(coordinator, sink);
  return { coordinator, sink };
}

/** Records every call sent through a connection. */
function recorder() {
  const sent: SentCall[] = [];
  const observer: CallObserver = (call) => {
    sent.push(call);
    return () => undefined;
  };
  return { sent, observer };
}

/** A toxic that lets requests through and swallows every reply on `link`, until removed. */
async function dropReplies(link: ClusterLink): Promise<() => Promise<void>> {
  const proxy: Proxy = await toxiproxy.get(cluster.proxyNames[link]);
  const toxic = await proxy.addToxic({
    name: 'drop_replies',
    type: 'timeout',
    stream: 'downstream',
    toxicity: 1,
    attributes: { timeout: 0 },
  } as never);
  return () => toxic.remove();
}

const lossOf = (keeper: LeaseKeeper) =>
  new Promise<unknown>((resolve) => keeper.signal.addEventListener('abort', () => resolve(keeper.signal.reason)));

describe('LeaseKeeper', () => {
  it('renews past its TTL, and release() frees the resource and fires RELEASED', async () => {
    const { coordinator } = connect('worker-a');
    const direct = connect('worker-a', { direct: true });
    let renewals = 0;
    const keeper = await LeaseKeeper.acquire(coordinator, {
      resource: 'keeper-renews',
      ownerId: 'worker-a',
      ttlMs: 1_500,
      onRenewed: () => renewals++,
    });
    expect(keeper.token).toBe(1n);
    // Held past its TTL: renewals (every TTL/3) are all that keep it. A loss ends the wait with its reason.
    await eventually(() => (renewals >= 4 || keeper.signal.aborted ? true : undefined), {
      timeoutMs: 15_000,
      what: '4 renewals',
    });
    expect(keeper.signal.reason).toBeUndefined();
    expect(keeper.signal.aborted).toBe(false);
    expect((await direct.coordinator.describe('keeper-renews')).lease?.token).toBe(1n);

    expect(await keeper.release()).toBe(true);
    expect(await keeper.release()).toBe(true); // the first call's answer, not a second Release
    expect(keeper.signal.reason).toBeInstanceOf(LeaseLostError);
    expect((keeper.signal.reason as LeaseLostError).reason).toBe('RELEASED');
    expect((await direct.coordinator.describe('keeper-renews')).lease).toBeUndefined();
  });

  it('retries an Acquire whose reply was dropped with the same request id, and the fence moves once (R1, R4)', async () => {
    const { sent, observer } = recorder();
    const { coordinator } = connect('worker-b', { observer, callTimeoutMs: 300 });
    const direct = connect('worker-b', { direct: true });
    const heal = await dropReplies('workersToCoordinator');
    const acquiring = LeaseKeeper.acquire(coordinator, {
      resource: 'keeper-receipt',
      ownerId: 'worker-b',
      ttlMs: 10_000,
      retry: FAST_RETRY,
    });
    // The grant happened even though its receipt never arrived.
    const granted = await eventually(async () => (await direct.coordinator.describe('keeper-receipt')).lease, {
      what: 'the grant at the coordinator',
    });
    await eventually(() => (sent.length >= 2 ? true : undefined), { what: 'a retried Acquire' });
    await heal();
    await using keeper = await acquiring;

    expect(keeper.token).toBe(granted.token);
    expect(keeper.replayed).toBe(true);
    const requestIds = new Set(sent.map((call) => (call.request as { request_id: string }).request_id));
    expect([...requestIds]).toEqual([keeper.requestId]);
    expect((await direct.coordinator.describe('keeper-receipt')).lastToken).toBe(keeper.token);
    expect(await direct.sink.getFence('keeper-receipt')).toBe(keeper.token);
  });

  it('fires LOCAL_DEADLINE_PASSED when renewals cannot get through before the local deadline', async () => {
    const { coordinator } = connect('worker-a', { callTimeoutMs: 200 });
    const keeper = await LeaseKeeper.acquire(coordinator, {
      resource: 'keeper-cut-off',
      ownerId: 'worker-a',
      ttlMs: 600,
      retry: FAST_RETRY,
    });
    const lost = lossOf(keeper);
    const heal = await dropReplies('workersToCoordinator');
    try {
      const reason = await lost;
      expect(reason).toBeInstanceOf(LeaseLostError);
      expect((reason as LeaseLostError).reason).toBe('LOCAL_DEADLINE_PASSED');
    } finally {
      await heal();
    }
  });

  it('fires the refusal when a renewal is refused (L4)', async () => {
    const { coordinator } = connect('worker-a');
    const keeper = await LeaseKeeper.acquire(coordinator, {
      resource: 'keeper-refused',
      ownerId: 'worker-a',
      incarnation: 7n,
      ttlMs: 600,
    });
    const lost = lossOf(keeper);
    // The same holder's release, sent behind the keeper's back: the grant is over.
    const direct = connect('worker-a', { direct: true });
    expect(
      await direct.coordinator.release({
        resource: 'keeper-refused',
        ownerId: 'worker-a',
        incarnation: 7n,
        token: keeper.token,
      }),
    ).toBe(true);
    const reason = await lost;
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(['LEASE_EXPIRED', 'NOT_LEASE_HOLDER']).toContain((reason as LeaseLostError).reason);
  });
});

// Each FencedWriter test runs twice: over a connection that sends unary
// Writes, then over one that sends messages of its WriteStream (the
// default), which must behave the same in every way.
describe.each([
  ['unary Write', { writeStream: false }],
  ['WriteStream', { writeStream: true }],
] as const)('FencedWriter over %s', (mode, sending) => {
  const named = (resource: string) => `${resource}-${mode === 'WriteStream' ? 'stream' : 'unary'}`;

  it('writes with the lease token, replays once, refuses a conflict, and a stale write is refused by the sink (F1, F3)', async () => {
    const a = connect('worker-a', sending);
    const b = connect('worker-b', sending);
    const keeperA = await LeaseKeeper.acquire(a.coordinator, {
      resource: named('writer-story'),
      ownerId: 'worker-a',
      ttlMs: 5_000,
    });
    const writerA = new FencedWriter(a.sink, keeperA);
    expect(await writerA.write('step-1', 'a1')).toEqual({ outcome: 'applied', fence: keeperA.token });
    expect(await writerA.write('step-1', 'a1')).toEqual({ outcome: 'replayed', fence: keeperA.token });
    await expect(writerA.write('step-1', 'other')).rejects.toBeInstanceOf(ResultConflictError);

    // A's lease ends without A noticing (its keeper still counts it held);
    // B takes over, and the fence moves before B is told its token.
    const direct = connect('worker-a', { direct: true });
    await direct.coordinator.release({
      resource: named('writer-story'),
      ownerId: 'worker-a',
      incarnation: keeperA.incarnation,
      token: keeperA.token,
    });
    await using keeperB = await LeaseKeeper.acquire(b.coordinator, {
      resource: named('writer-story'),
      ownerId: 'worker-b',
      ttlMs: 5_000,
    });
    expect(keeperB.token).toBeGreaterThan(keeperA.token);

    const stale = await writerA.write('step-2', 'a2').catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(LeaseLostError);
    expect([(stale as LeaseLostError).reason, (stale as LeaseLostError).fence]).toEqual(['STALE_TOKEN', keeperB.token]);
    expect(keeperA.signal.reason).toBe(stale); // the writer told the keeper
    expect(await new FencedWriter(b.sink, keeperB).write('step-2', 'b2')).toEqual({
      outcome: 'applied',
      fence: keeperB.token,
    });
    expect((await direct.sink.read(named('writer-story'), 'step-2')).payload.toString()).toBe('b2');
  });

  it('retries a write whose reply was dropped with the same result id: applied once, then replayed', async () => {
    const { sent, observer } = recorder();
    const worker = connect('worker-a', { observer, callTimeoutMs: 300, ...sending });
    const direct = connect('worker-a', { direct: true });
    await using keeper = await LeaseKeeper.acquire(direct.coordinator, {
      resource: named('writer-receipt'),
      ownerId: 'worker-a',
      ttlMs: 10_000,
    });
    const heal = await dropReplies('workersToSink');
    const writing = new FencedWriter(worker.sink, keeper, { retry: FAST_RETRY }).write('only', 'payload');
    await eventually(
      async () => (await direct.sink.read(named('writer-receipt'), 'only').catch(() => undefined))?.payload,
      {
        what: 'the write at the sink',
      },
    );
    await eventually(() => (sent.length >= 2 ? true : undefined), { what: 'a retried Write' });
    await heal();

    expect(await writing).toEqual({ outcome: 'replayed', fence: keeper.token });
    const writes = sent.filter((call) => call.method === 'Write') as {
      request: { result_id: string; token: string };
      streamed?: true;
    }[];
    expect(new Set(writes.map((call) => `${call.request.result_id}@${call.request.token}`))).toEqual(
      new Set([`only@${keeper.token}`]),
    );
    expect(new Set(writes.map((call) => call.streamed === true))).toEqual(new Set([mode === 'WriteStream']));
  });

  it('never retries once the lease is lost: the write fails with its transient error after one attempt', async () => {
    const { sent, observer } = recorder();
    const worker = connect('worker-a', { observer, callTimeoutMs: 300, ...sending });
    const direct = connect('worker-a', { direct: true });
    const keeper = await LeaseKeeper.acquire(direct.coordinator, {
      resource: named('writer-lost'),
      ownerId: 'worker-a',
      ttlMs: 10_000,
    });
    await keeper.release();
    const heal = await dropReplies('workersToSink');
    try {
      const failed = await new FencedWriter(worker.sink, keeper, { retry: FAST_RETRY })
        .write('late', 'x')
        .catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(UnavailableError);
      expect(sent.filter((call) => call.method === 'Write')).toHaveLength(1);
    } finally {
      await heal();
    }
  });
});
