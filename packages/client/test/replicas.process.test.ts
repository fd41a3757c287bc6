// H7: a coordinator connection over several replicas. The standbys here are
// stand-ins (startScriptedCoordinator: real grpc-js servers on real sockets
// that answer NOT_LEADER, UNAVAILABLE, nothing, or forward to the leader as
// each test scripts), because the replicas of services/coordinator are built
// apart; the leader behind them is a real `fencer coordinator` on LevelDB
// with a real sink, so every grant here is a real one.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import type { Cluster } from '@fencer/supervisor';
import {
  coordinatorApi,
  coordinatorClient,
  eventually,
  startScriptedCoordinator,
  startTestCluster,
  type ScriptedAnswer,
  type ScriptedCall,
} from '@fencer/testkit';
import {
  CoordinatorConnection,
  LeaseKeeper,
  LeaseLostError,
  NotLeaderError,
  UnavailableError,
  type CallObserver,
  type CallOutcome,
  type SentCall,
} from '../src/index.js';

const FAST_RETRY = { initialMs: 20, maxMs: 100, multiplier: 2, maxAttempts: 30 };

let cluster: Cluster;
let stopCluster: () => Promise<void>;
/** The real coordinator: the leader every stand-in names. */
let leader: string;
let leaderApi: ReturnType<typeof coordinatorApi>;
const closers: { close(): unknown }[] = [];

beforeAll(async () => {
  ({ cluster, stop: stopCluster } = await startTestCluster('fencer-client-replicas-', { insecure: true }));
  leader = cluster.coordinator.ready.address;
  const client = coordinatorClient(leader);
  closers.push(client);
  leaderApi = coordinatorApi(client);
});

afterAll(async () => {
  // Leases first, then the connections, then the stand-ins they call.
  for (const closer of closers.reverse()) await Promise.resolve(closer.close()).catch(() => undefined);
  await stopCluster?.();
});

let resourceCount = 0;
let resource: string;
beforeEach(() => {
  resource = `replicated-${++resourceCount}`;
});

async function replica(script: (call: ScriptedCall) => ScriptedAnswer | Promise<ScriptedAnswer>) {
  const started = await startScriptedCoordinator(script);
  closers.push(started);
  return started;
}

/** A stand-in that passes each call on to the real leader and answers with its answer: a leader, seen from outside. */
const forwarding = async (call: ScriptedCall): Promise<ScriptedAnswer> => {
  const request = call.request as never;
  const result =
    call.method === 'Acquire'
      ? await leaderApi.acquire(request)
      : call.method === 'Renew'
        ? await leaderApi.renew(request)
        : call.method === 'Release'
          ? await leaderApi.release(request)
          : await leaderApi.describe((request as { resource: string }).resource);
  if (!result.ok) throw new Error(`the leader refused a forwarded ${call.method}: ${result.failure.reason}`);
  return { response: result.value };
};

/** Records each call sent through a connection, with the replica it went to and how it ended. */
function recorder() {
  const sent: { call: SentCall; outcome?: CallOutcome }[] = [];
  const observer: CallObserver = (call) => {
    const entry: (typeof sent)[number] = { call };
    sent.push(entry);
    return (outcome) => {
      entry.outcome = outcome;
    };
  };
  /** "address method outcome" per call, the outcome a reason or ok. */
  const trail = () =>
    sent.map(({ call, outcome }) => {
      const ended = outcome === undefined ? 'pending' : outcome.ok ? 'ok' : outcome.error.reason || 'transport';
      return `${call.address} ${call.method} ${ended}`;
    });
  return { sent, observer, trail };
}

function connect(coordinators: string[], options: { observer?: CallObserver; callTimeoutMs?: number } = {}) {
  const connection = new CoordinatorConnection({
    coordinators,
    callTimeoutMs: options.callTimeoutMs ?? 1_000,
    ...(options.observer ? { observer: options.observer } : {}),
  });
  closers.push(connection);
  return connection;
}

describe('CoordinatorConnection over replicas (H7)', () => {
  it('follows NOT_LEADER to the named leader, where the Acquire is granted with the same request id (R4)', async () => {
    const standby = await replica(() => ({ notLeader: leader }));
    const calls = recorder();
    const coordinator = connect([standby.address], { observer: calls.observer });

    const keeper = await LeaseKeeper.acquire(coordinator, { resource, ownerId: 'w1', ttlMs: 5_000, retry: FAST_RETRY });
    closers.push({ close: () => keeper.release() });

    expect(calls.trail()).toEqual([`${standby.address} Acquire NOT_LEADER`, `${leader} Acquire ok`]);
    expect(calls.sent.map(({ call }) => (call.request as { request_id: string }).request_id)).toEqual([
      keeper.requestId,
      keeper.requestId,
    ]);
    expect(standby.calls.map((call) => call.request.request_id)).toEqual([keeper.requestId]);
    // The leader now holds it for w1; the next call goes straight there.
    expect(coordinator.address).toBe(leader);
    const described = await coordinator.describe(resource);
    expect([described.lease?.ownerId, described.lease?.token]).toEqual(['w1', keeper.token]);
    expect(calls.trail().at(-1)).toBe(`${leader} Describe ok`);
    expect(standby.calls).toHaveLength(1);
  });

  it('moves on past a replica that does not answer, one that is UNAVAILABLE, and one that names no leader', async () => {
    const silent = await replica(() => 'hang');
    const stopping = await replica(() => ({ status: grpc.status.UNAVAILABLE }));
    const electing = await replica(() => ({ notLeader: null }));
    const calls = recorder();
    const coordinator = connect([silent.address, stopping.address, electing.address, leader], {
      observer: calls.observer,
      callTimeoutMs: 500,
    });

    const acquired = await coordinator.acquire({
      requestId: 'walk-1',
      resource,
      ownerId: 'w1',
      incarnation: 1n,
      ttlMs: 5_000,
    });

    expect(acquired.replayed).toBe(false);
    expect(calls.trail()).toEqual([
      `${silent.address} Acquire transport`, // its deadline passed
      `${stopping.address} Acquire transport`,
      `${electing.address} Acquire NOT_LEADER`,
      `${leader} Acquire ok`,
    ]);
    for (const standIn of [silent, stopping, electing])
      expect(standIn.calls.map((call) => call.request.request_id)).toEqual(['walk-1']);
  });

  it('a grant whose answer the old leader lost is replayed by the new one: the same token (R1, H4)', async () => {
    // The old leader writes the grant, then loses its leadership before it answers (H2: checked again before answering).
    const deposed = await replica(async (call) => {
      await forwarding(call);
      return { notLeader: null };
    });
    const successor = await replica(() => ({ notLeader: leader }));
    const coordinator = connect([deposed.address, successor.address]);

    const keeper = await LeaseKeeper.acquire(coordinator, { resource, ownerId: 'w1', ttlMs: 5_000, retry: FAST_RETRY });
    closers.push({ close: () => keeper.release() });

    expect(keeper.replayed).toBe(true);
    const described = await coordinator.describe(resource);
    expect([described.lease?.token, described.lastToken]).toEqual([keeper.token, keeper.token]);
  });

  it('every replica refusing: the last NotLeaderError, retryable, after asking each once', async () => {
    const a = await replica(() => ({ notLeader: null }));
    const b = await replica(() => ({ notLeader: a.address })); // names one already asked
    const coordinator = connect([a.address, b.address]);
    const error = await coordinator.describe(resource).then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    expect(error).toBeInstanceOf(NotLeaderError);
    expect([(error as NotLeaderError).leader, (error as NotLeaderError).retryable]).toEqual([a.address, true]);
    expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
  });

  it('one address still works as before: a transport failure is thrown, not walked around', async () => {
    const stopping = await replica(() => ({ status: grpc.status.UNAVAILABLE }));
    const coordinator = new CoordinatorConnection({ address: stopping.address, callTimeoutMs: 500 });
    closers.push(coordinator);
    await expect(coordinator.describe(resource)).rejects.toBeInstanceOf(UnavailableError);
    expect(stopping.calls).toHaveLength(1);
    expect(() => new CoordinatorConnection({ coordinators: [] })).toThrow(/at least one/);
    expect(() => new CoordinatorConnection({ coordinators: [leader, leader] })).toThrow(/listed twice/);
  });
});

describe('LeaseKeeper across a failover (H7)', () => {
  /**
   * The lease is granted through `old`, a stand-in passing calls on to the
   * real coordinator; then `old` is deposed and both replicas answer
   * NOT_LEADER with no leader (an election), until `elect()` makes them
   * name the real coordinator's own address: the new leader.
   */
  async function failoverSetup(ttlMs: number) {
    let phase: 'leading' | 'electing' | 'elected' = 'leading';
    const answer = (call: ScriptedCall): ScriptedAnswer | Promise<ScriptedAnswer> =>
      phase === 'leading' ? forwarding(call) : { notLeader: phase === 'elected' ? leader : null };
    const old = await replica(answer);
    const standby = await replica((call) => (phase === 'leading' ? { notLeader: old.address } : answer(call)));
    const calls = recorder();
    const coordinator = connect([old.address, standby.address], { observer: calls.observer, callTimeoutMs: 500 });
    const renewed: number[] = [];
    const keeper = await LeaseKeeper.acquire(coordinator, {
      resource,
      ownerId: 'w1',
      ttlMs,
      renewEveryMs: ttlMs / 6,
      retry: FAST_RETRY,
      onRenewed: (lease) => renewed.push(lease.remainingMs),
    });
    return {
      calls,
      keeper,
      renewed,
      depose: () => (phase = 'electing'),
      elect: () => (phase = 'elected'),
    };
  }

  const refusedRenewals = (calls: ReturnType<typeof recorder>) =>
    calls.sent.filter(({ call, outcome }) => call.method === 'Renew' && outcome?.ok === false).length;

  it('a failover shorter than the remaining TTL is a slow Renew: the lease is kept, renewed at the new leader', async () => {
    const { calls, keeper, renewed, depose, elect } = await failoverSetup(6_000);
    await eventually(() => (renewed.length >= 1 ? true : undefined), { what: 'a renewal through the old leader' });
    depose();
    // Several renewals refused through the election, each replica asked; the lease still held.
    await eventually(() => (refusedRenewals(calls) >= 4 ? true : undefined), { what: 'renewals refused NOT_LEADER' });
    expect(keeper.signal.aborted).toBe(false);
    const deadlineDuringElection = keeper.deadlineMs;
    elect();
    await eventually(() => (calls.trail().includes(`${leader} Renew ok`) ? true : undefined), {
      what: 'a renewal at the new leader',
    });
    expect(keeper.signal.aborted).toBe(false);
    await eventually(() => (keeper.deadlineMs > deadlineDuringElection ? true : undefined), {
      what: 'the local deadline to move on',
    });
    const described = await leaderApi.describe(resource);
    expect(described.ok && described.value.lease?.token).toBe(keeper.token.toString());
    expect(await keeper.release()).toBe(true);
  });

  it('a failover longer than the remaining TTL: lost at the local deadline, renewals retried until then', async () => {
    const { calls, keeper, renewed, depose } = await failoverSetup(1_500);
    await eventually(() => (renewed.length >= 1 ? true : undefined), { what: 'a renewal through the old leader' });
    depose();
    const reason = await new Promise<unknown>((resolve) =>
      keeper.signal.addEventListener('abort', () => resolve(keeper.signal.reason), { once: true }),
    );
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect((reason as LeaseLostError).reason).toBe('LOCAL_DEADLINE_PASSED');
    expect(refusedRenewals(calls)).toBeGreaterThanOrEqual(2);
  });
});
