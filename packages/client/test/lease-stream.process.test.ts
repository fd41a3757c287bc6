// CoordinatorConnection's LeaseStream against stand-in replicas
// (startScriptedCoordinator: real grpc-js servers on real sockets): the
// three lease calls go as messages of one stream, a caller's shorter
// deadline ends only its own message, and a coordinator of the shared
// contract alone (no LeaseStream) gets the same calls as unary ones; and,
// against real `fencer` processes, a coordinator's max connection age
// moves the stream to a new connection without failing a call on it.
import { afterAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { startScriptedCoordinator, startTestCluster, type ScriptedAnswer, type ScriptedCall } from '@fencer/testkit';
import { CoordinatorConnection, UnavailableError, type CallObserver } from '../src/index.js';

const closers: { close(): unknown }[] = [];

afterAll(async () => {
  for (const closer of closers.reverse()) await Promise.resolve(closer.close()).catch(() => undefined);
});

const LEASE = {
  resource: 'r',
  owner_id: 'w',
  incarnation: '1',
  token: '7',
  ttl_ms: '1000',
  remaining_ms: '1000',
  sink: null,
};

/** Answers each lease call as a leader would; 'hang' for a Renew when `renewHangs`. */
function leaderScript(state: { renewHangs: boolean }) {
  return (call: ScriptedCall): ScriptedAnswer => {
    if (call.method === 'Acquire') return { response: { lease: LEASE, replayed: false } };
    if (call.method === 'Renew') return state.renewHangs ? 'hang' : { response: { lease: LEASE } };
    return { response: { released: true } };
  };
}

/** A connection to `address` and the trail of its calls: "Method streamed|unary outcome". */
function connect(address: string) {
  const trail: string[] = [];
  const observer: CallObserver = (call) => (outcome) =>
    trail.push(
      `${call.method} ${call.streamed ? 'streamed' : 'unary'} ${outcome.ok ? 'ok' : grpc.status[outcome.error.code]}`,
    );
  const connection = new CoordinatorConnection({ address, observer, callTimeoutMs: 5_000 });
  closers.push(connection);
  return { connection, trail };
}

const identity = { resource: 'r', ownerId: 'w', incarnation: 1n };

describe('CoordinatorConnection: lease calls as LeaseStream messages', () => {
  it('sends Acquire, Renew and Release as messages; a shorter deadline ends only its own message', async () => {
    const state = { renewHangs: false };
    const replica = await startScriptedCoordinator(leaderScript(state));
    closers.push(replica);
    const { connection, trail } = connect(replica.address);

    const { lease } = await connection.acquire({ ...identity, requestId: 'q1', ttlMs: 1_000 });
    expect(lease.token).toBe(7n);
    state.renewHangs = true;
    const late = await connection
      .renew({ ...identity, token: 7n, ttlMs: 0 }, { timeoutMs: 100 })
      .catch((error: unknown) => error);
    expect(late).toBeInstanceOf(UnavailableError);
    expect((late as UnavailableError).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    state.renewHangs = false;
    // The stream is not broken by one message's own deadline: the next ones are answered on it.
    expect((await connection.renew({ ...identity, token: 7n, ttlMs: 0 })).token).toBe(7n);
    expect(await connection.release({ ...identity, token: 7n })).toBe(true);

    expect(trail).toEqual([
      'Acquire streamed ok',
      'Renew streamed DEADLINE_EXCEEDED',
      'Renew streamed ok',
      'Release streamed ok',
    ]);
    expect(replica.calls.map((call) => call.method)).toEqual(['Acquire', 'Renew', 'Renew', 'Release']);
    expect(replica.leaseStreamsOpened).toBe(1);
  });

  it('falls back to unary calls for a coordinator without LeaseStream: the refused message is sent again at once', async () => {
    const replica = await startScriptedCoordinator(leaderScript({ renewHangs: false }), { leaseStream: false });
    closers.push(replica);
    const { connection, trail } = connect(replica.address);

    expect((await connection.acquire({ ...identity, requestId: 'q1', ttlMs: 1_000 })).lease.token).toBe(7n);
    expect(await connection.release({ ...identity, token: 7n })).toBe(true);

    // The stream is tried once; the replica never saw the refused message, only the unary calls.
    expect(trail).toEqual(['Acquire streamed UNIMPLEMENTED', 'Acquire unary ok', 'Release unary ok']);
    expect(replica.calls.map((call) => call.method)).toEqual(['Acquire', 'Release']);
  });

  it('sends unary calls only with leaseStream: false', async () => {
    const replica = await startScriptedCoordinator(leaderScript({ renewHangs: false }));
    closers.push(replica);
    const trail: string[] = [];
    const connection = new CoordinatorConnection({
      address: replica.address,
      leaseStream: false,
      observer: (call) => () => trail.push(`${call.method} ${call.streamed ? 'streamed' : 'unary'}`),
    });
    closers.push(connection);
    await connection.acquire({ ...identity, requestId: 'q1', ttlMs: 1_000 });
    expect(trail).toEqual(['Acquire unary']);
  });

  it("a coordinator's max connection age moves the stream to a new connection: no lease call on it fails", async () => {
    // Asked to go away every 300 ms, and closed with whatever it carries 200 ms later.
    const ages = ['--max-connection-age-ms', '300', '--max-connection-age-grace-ms', '200'];
    const { cluster, stop } = await startTestCluster('fencer-client-lease-aging-', {
      insecure: true,
      coordinatorFlags: ages,
    });
    closers.push({ close: stop });
    const connection = new CoordinatorConnection({ address: cluster.coordinator.ready.address });
    closers.push(connection);
    const outcomes = new Map<string, number>();
    const count = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    // Two Renews always in flight (Acquires are rate-limited per owner, V4), for about ten of the connection's lifetimes.
    const until = performance.now() + 3_000;
    await Promise.all(
      ['one', 'two'].map(async (lane) => {
        const held = { resource: `aging-${lane}`, ownerId: lane, incarnation: 1n };
        const { lease } = await connection.acquire({ ...held, requestId: lane, ttlMs: 10_000 });
        while (performance.now() < until) {
          try {
            count(
              (await connection.renew({ ...held, token: lease.token, ttlMs: 0 })).token === lease.token
                ? 'renewed'
                : '?',
            );
          } catch (error) {
            count(`${(error as Error).name}: ${(error as Error).message}`);
          }
        }
        expect(await connection.release({ ...held, token: lease.token })).toBe(true);
      }),
    );
    expect([...outcomes.keys()]).toEqual(['renewed']);
    expect(outcomes.get('renewed')).toBeGreaterThan(100);
  });
});
