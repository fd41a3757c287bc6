// The commit path on the in-memory store: outcomes (F1, F3, F4), nothing
// changed after a refusal, one critical section per resource (F2),
// durability before any answer (F6), fail-stop.
import { describe, expect, it } from 'vitest';
import { turn } from '@fencer/testkit';
import { MemoryDisk, memoryStore } from '../../test/doubles/memory-store.js';
import { SinkEngine } from './sink-engine.js';
import { StoreFailedError } from '@fencer/common';

const text = (value: string) => new TextEncoder().encode(value);

function setup(options: { manualSync?: boolean } = {}) {
  const disk = new MemoryDisk();
  const { store, backend } = memoryStore(disk, options);
  return { disk, store, backend, engine: new SinkEngine(store) };
}

/** Everything durable, as plain values, to compare before and after a refusal. */
function snapshot(disk: MemoryDisk) {
  return {
    fences: [...disk.fences].map(([k, v]) => [k, v.fence, v.grantId, v.ownerId]),
    results: [...disk.results].map(([k, v]) => [k, v.token, Array.from(v.payload)]),
  };
}

function tracked<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

describe('SinkEngine writes (F1, F3)', () => {
  it('F1: applies a write under the current fence and stores it with its token', async () => {
    const { engine, disk } = setup();
    await engine.advanceFence({ resource: 'r', token: 3n, grantId: 'g3', ownerId: null });
    expect(await engine.write({ resource: 'r', token: 3n, resultId: 'x', payload: text('p'), writer: null })).toEqual({
      kind: 'applied',
      fence: 3n,
    });
    expect(await engine.read('r', 'x')).toEqual({ kind: 'found', token: 3n, payload: text('p') });
    expect(disk.results.size).toBe(1);
  });

  const refusals = [
    {
      name: 'F1: a stale token is refused with the fence',
      token: 2n,
      resultId: 'new',
      payload: 'p',
      expected: { kind: 'stale', fence: 3n },
    },
    {
      name: 'F1: a token never issued is refused with the fence',
      token: 4n,
      resultId: 'new',
      payload: 'p',
      expected: { kind: 'not-issued', fence: 3n },
    },
    {
      name: 'F3: another payload under a stored result_id conflicts',
      token: 3n,
      resultId: 'x',
      payload: 'other',
      expected: { kind: 'conflict', fence: 3n },
    },
    {
      name: 'F3: a stale replay is STALE_TOKEN (token check first)',
      token: 2n,
      resultId: 'x',
      payload: 'p',
      expected: { kind: 'stale', fence: 3n },
    },
    {
      name: 'F3: a replay succeeds without storing anything',
      token: 3n,
      resultId: 'x',
      payload: 'p',
      expected: { kind: 'replayed', fence: 3n },
    },
  ] as const;
  it.each(refusals)('$name, and nothing changes', async ({ token, resultId, payload, expected }) => {
    const { engine, disk, store } = setup();
    await engine.advanceFence({ resource: 'r', token: 3n, grantId: 'g3', ownerId: null });
    await engine.write({ resource: 'r', token: 3n, resultId: 'x', payload: text('p'), writer: null });
    const before = snapshot(disk);
    const commitsBefore = store.stats.commits;
    expect(await engine.write({ resource: 'r', token, resultId, payload: text(payload), writer: null })).toEqual(
      expected,
    );
    expect(snapshot(disk)).toEqual(before);
    expect(store.stats.commits).toBe(commitsBefore);
    expect(await engine.read('r', 'x')).toEqual({ kind: 'found', token: 3n, payload: text('p') });
    expect(await engine.read('r', 'new')).toEqual({ kind: 'not-found' });
  });

  it('F1: a resource that was never advanced accepts no write', async () => {
    const { engine, disk } = setup();
    expect(await engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p'), writer: null })).toEqual({
      kind: 'not-issued',
      fence: 0n,
    });
    expect(disk.results.size).toBe(0);
    expect(await engine.getFence('r')).toBe(0n);
  });

  it('F5: without a takeover the old holder still writes; after the takeover it is fenced out', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1', ownerId: null });
    // The lease of token 1 expired, nobody took over: the fence is still 1.
    expect(
      (await engine.write({ resource: 'r', token: 1n, resultId: 'a', payload: text('p'), writer: null })).kind,
    ).toBe('applied');
    await engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2', ownerId: null });
    expect(await engine.write({ resource: 'r', token: 1n, resultId: 'b', payload: text('p'), writer: null })).toEqual({
      kind: 'stale',
      fence: 2n,
    });
    expect(
      (await engine.write({ resource: 'r', token: 2n, resultId: 'b', payload: text('p'), writer: null })).kind,
    ).toBe('applied');
  });
});

describe('SinkEngine owner binding (A5)', () => {
  const write = (writer: string | null, token: bigint, resultId: string, payload = 'p') => ({
    resource: 'r',
    token,
    resultId,
    payload: text(payload),
    writer,
  });

  it("refuses another identity under the owner's token, changing nothing; the owner writes", async () => {
    const { engine, disk, store } = setup();
    await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'g5', ownerId: 'worker-a' });
    await engine.write(write('worker-a', 5n, 'x'));
    const before = snapshot(disk);
    const commitsBefore = store.stats.commits;
    expect(await engine.write(write('worker-b', 5n, 'y'))).toEqual({ kind: 'owner-mismatch', fence: 5n });
    // Before F3: no REPLAYED or RESULT_CONFLICT tells another identity what the owner stored.
    expect(await engine.write(write('worker-b', 5n, 'x'))).toEqual({ kind: 'owner-mismatch', fence: 5n });
    expect(await engine.write(write('worker-b', 5n, 'x', 'other'))).toEqual({ kind: 'owner-mismatch', fence: 5n });
    expect(snapshot(disk)).toEqual(before);
    expect(store.stats.commits).toBe(commitsBefore);
    expect(await engine.read('r', 'y')).toEqual({ kind: 'not-found' });
    expect(await engine.write(write('worker-a', 5n, 'y'))).toEqual({ kind: 'applied', fence: 5n });
  });

  it('checks the token first: a stale or invented token from another identity is STALE_TOKEN or TOKEN_NOT_ISSUED', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'g5', ownerId: 'worker-a' });
    expect(await engine.write(write('worker-b', 4n, 'x'))).toEqual({ kind: 'stale', fence: 5n });
    expect(await engine.write(write('worker-b', 6n, 'x'))).toEqual({ kind: 'not-issued', fence: 5n });
  });

  it("F4: the same grant's retry still succeeds and keeps the binding", async () => {
    const { engine } = setup();
    const advance = { resource: 'r', token: 5n, grantId: 'g5', ownerId: 'worker-a' };
    expect(await engine.advanceFence(advance)).toEqual({ kind: 'advanced', fence: 5n });
    expect(await engine.advanceFence(advance)).toEqual({ kind: 'retry-same-grant', fence: 5n });
    expect((await engine.write(write('worker-b', 5n, 'x'))).kind).toBe('owner-mismatch');
    expect((await engine.write(write('worker-a', 5n, 'x'))).kind).toBe('applied');
  });

  it('a takeover binds the new fence to the new holder; an advance without owner_id binds no one', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'g5', ownerId: 'worker-a' });
    await engine.advanceFence({ resource: 'r', token: 6n, grantId: 'g6', ownerId: 'worker-b' });
    expect((await engine.write(write('worker-a', 6n, 'x'))).kind).toBe('owner-mismatch');
    expect((await engine.write(write('worker-b', 6n, 'x'))).kind).toBe('applied');
    await engine.advanceFence({ resource: 'r', token: 7n, grantId: 'g7', ownerId: null });
    expect((await engine.write(write('worker-a', 7n, 'y'))).kind).toBe('applied');
  });

  it('with auth off (no writer identity) a bound fence admits the write', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'g5', ownerId: 'worker-a' });
    expect((await engine.write(write(null, 5n, 'x'))).kind).toBe('applied');
  });

  it('the binding is durable: a sink reopened after a crash still refuses another identity', async () => {
    const { engine, disk } = setup();
    await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'g5', ownerId: 'worker-a' });
    const reopened = new SinkEngine(memoryStore(disk).store);
    expect(await reopened.write(write('worker-b', 5n, 'x'))).toEqual({ kind: 'owner-mismatch', fence: 5n });
  });
});

describe('SinkEngine fences (F4)', () => {
  it('moves up, accepts the same grant retry, refuses regressions without change', async () => {
    const { engine, disk } = setup();
    expect(await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'g5', ownerId: null })).toEqual({
      kind: 'advanced',
      fence: 5n,
    });
    expect(await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'g5', ownerId: null })).toEqual({
      kind: 'retry-same-grant',
      fence: 5n,
    });
    const before = snapshot(disk);
    expect(await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'other', ownerId: null })).toEqual({
      kind: 'regression',
      fence: 5n,
    });
    expect(await engine.advanceFence({ resource: 'r', token: 4n, grantId: 'g4', ownerId: null })).toEqual({
      kind: 'regression',
      fence: 5n,
    });
    expect(snapshot(disk)).toEqual(before);
    expect(await engine.getFence('r')).toBe(5n);
  });

  it('a takeover on resource X leaves resource Y writes accepted', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'X', token: 1n, grantId: 'x1', ownerId: null });
    await engine.advanceFence({ resource: 'Y', token: 1n, grantId: 'y1', ownerId: null });
    await engine.advanceFence({ resource: 'X', token: 2n, grantId: 'x2', ownerId: null });
    expect(
      (await engine.write({ resource: 'X', token: 1n, resultId: 'a', payload: text('p'), writer: null })).kind,
    ).toBe('stale');
    expect(
      (await engine.write({ resource: 'Y', token: 1n, resultId: 'a', payload: text('p'), writer: null })).kind,
    ).toBe('applied');
    expect(await engine.getFence('Y')).toBe(1n);
  });
});

describe('SinkEngine critical section and durability (F2, F6)', () => {
  it('F2: a write queued behind an AdvanceFence sees the new fence; one queued before it is applied', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1', ownerId: null });
    const before = engine.write({ resource: 'r', token: 1n, resultId: 'before', payload: text('p'), writer: null });
    const advance = engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2', ownerId: null });
    const after = engine.write({ resource: 'r', token: 1n, resultId: 'after', payload: text('p'), writer: null });
    expect(await before).toEqual({ kind: 'applied', fence: 1n });
    expect(await advance).toEqual({ kind: 'advanced', fence: 2n });
    expect(await after).toEqual({ kind: 'stale', fence: 2n });
    expect(await engine.read('r', 'after')).toEqual({ kind: 'not-found' });
  });

  it('F2: concurrent writes of one result_id store exactly one payload (S6)', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1', ownerId: null });
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text(`p${i}`), writer: null }),
      ),
    );
    expect(outcomes.filter((o) => o.kind === 'applied')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'conflict')).toHaveLength(19);
    const stored = await engine.read('r', 'x');
    expect(stored.kind === 'found' && new TextDecoder().decode(stored.payload)).toBe('p0');
  });

  it('F6: the lock is released before the fsync (pipelining) but no answer comes before it', async () => {
    const { engine, store, backend } = setup({ manualSync: true });
    const advance = tracked(engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1', ownerId: null }));
    const write = tracked(engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p'), writer: null }));
    await turn();
    // The write was decided (and committed) while the advance's batch was still unsynced.
    expect(store.stats.commits).toBe(2);
    expect(advance.settled || write.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(advance.value).toEqual({ kind: 'advanced', fence: 1n });
    expect(write.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(write.value).toEqual({ kind: 'applied', fence: 1n });
  });

  it('F6/S5: a REPLAYED answer waits until the original write is durable', async () => {
    const { engine, backend } = setup({ manualSync: true });
    void engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1', ownerId: null });
    await turn();
    backend.syncNext();
    await turn();
    const original = tracked(
      engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p'), writer: null }),
    );
    const replay = tracked(engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p'), writer: null }));
    await turn();
    expect(replay.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(original.value).toEqual({ kind: 'applied', fence: 1n });
    expect(replay.value).toEqual({ kind: 'replayed', fence: 1n });
  });

  it('F6: a refusal resting on a pending fence waits for it; the same grant retry waits too', async () => {
    const { engine, backend } = setup({ manualSync: true });
    const advance = tracked(engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2', ownerId: null }));
    const retry = tracked(engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2', ownerId: null }));
    const stale = tracked(engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p'), writer: null }));
    await turn();
    expect([advance.settled, retry.settled, stale.settled]).toEqual([false, false, false]);
    backend.syncNext();
    await turn();
    expect(advance.value).toEqual({ kind: 'advanced', fence: 2n });
    expect(retry.value).toEqual({ kind: 'retry-same-grant', fence: 2n });
    expect(stale.value).toEqual({ kind: 'stale', fence: 2n });
  });

  it('outcomes of one resource settle in decision order, even within one batch', async () => {
    const { engine, backend } = setup({ manualSync: true });
    void engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1', ownerId: null });
    const order: string[] = [];
    const calls = [
      engine
        .write({ resource: 'r', token: 1n, resultId: 'a', payload: text('p'), writer: null })
        .then(() => order.push('a')),
      engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2', ownerId: null }).then(() => order.push('advance')),
      engine
        .write({ resource: 'r', token: 1n, resultId: 'b', payload: text('p'), writer: null })
        .then(() => order.push('b')),
    ];
    await turn();
    backend.syncNext(); // the first advance
    await turn();
    backend.syncNext(); // a, the advance to 2 and b's refusal wait on one batch
    await Promise.all(calls);
    expect(order).toEqual(['a', 'advance', 'b']);
  });

  it('Read and GetFence answer only durable state', async () => {
    const { engine, backend } = setup({ manualSync: true });
    const fence = tracked(engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1', ownerId: null }));
    await turn(); // the advance is committed, not yet synced
    const read = tracked(engine.getFence('r'));
    await turn();
    expect(read.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(fence.settled).toBe(true);
    expect(read.value).toBe(1n);
    const write = tracked(engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p'), writer: null }));
    await turn();
    const result = tracked(engine.read('r', 'x'));
    await turn();
    expect(result.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(write.value).toEqual({ kind: 'applied', fence: 1n });
    expect(result.value).toEqual({ kind: 'found', token: 1n, payload: text('p') });
  });

  it('fail-stop: a failed commit is never answered as success, and later calls are refused', async () => {
    const { engine, backend, disk } = setup({ manualSync: true });
    const advance = engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1', ownerId: null });
    const write = engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p'), writer: null });
    await turn();
    backend.failNext();
    await expect(advance).rejects.toBeInstanceOf(StoreFailedError);
    await expect(write).rejects.toBeInstanceOf(StoreFailedError);
    await expect(
      engine.write({ resource: 'q', token: 1n, resultId: 'x', payload: text('p'), writer: null }),
    ).rejects.toBeInstanceOf(StoreFailedError);
    await expect(engine.getFence('r')).rejects.toBeInstanceOf(StoreFailedError);
    expect(disk.fences.size + disk.results.size).toBe(0);
  });

  it("different resources do not wait for each other's locks", async () => {
    const { engine, store } = setup({ manualSync: true });
    // Both decisions are taken although neither batch is synced.
    void engine.advanceFence({ resource: 'a', token: 1n, grantId: 'a1', ownerId: null });
    void engine.advanceFence({ resource: 'b', token: 1n, grantId: 'b1', ownerId: null });
    await turn();
    expect(store.stats.commits).toBe(2);
  });
});
