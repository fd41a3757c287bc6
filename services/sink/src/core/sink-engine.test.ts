// The commit path on the in-memory store: outcomes (F1, F3, F4), nothing
// changed after a refusal, one critical section per resource (F2),
// durability before any answer (F6), fail-stop.
import { describe, expect, it } from 'vitest';
import { turn } from '@fencer/testkit';
import { MemoryDisk, memoryStore } from '../../test/doubles/memory-store.js';
import { SinkEngine } from './sink-engine.js';
import { StoreFailedError } from './store.js';

const text = (value: string) => new TextEncoder().encode(value);

function setup(options: { manualSync?: boolean } = {}) {
  const disk = new MemoryDisk();
  const { store, backend } = memoryStore(disk, options);
  return { disk, store, backend, engine: new SinkEngine(store) };
}

/** Everything durable, as plain values, to compare before and after a refusal. */
function snapshot(disk: MemoryDisk) {
  return {
    fences: [...disk.fences].map(([k, v]) => [k, v.fence, v.grantId]),
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
    await engine.advanceFence({ resource: 'r', token: 3n, grantId: 'g3' });
    expect(await engine.write({ resource: 'r', token: 3n, resultId: 'x', payload: text('p') })).toEqual({
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
    await engine.advanceFence({ resource: 'r', token: 3n, grantId: 'g3' });
    await engine.write({ resource: 'r', token: 3n, resultId: 'x', payload: text('p') });
    const before = snapshot(disk);
    const commitsBefore = store.stats.commits;
    expect(await engine.write({ resource: 'r', token, resultId, payload: text(payload) })).toEqual(expected);
    expect(snapshot(disk)).toEqual(before);
    expect(store.stats.commits).toBe(commitsBefore);
    expect(await engine.read('r', 'x')).toEqual({ kind: 'found', token: 3n, payload: text('p') });
    expect(await engine.read('r', 'new')).toEqual({ kind: 'not-found' });
  });

  it('F1: a resource that was never advanced accepts no write', async () => {
    const { engine, disk } = setup();
    expect(await engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p') })).toEqual({
      kind: 'not-issued',
      fence: 0n,
    });
    expect(disk.results.size).toBe(0);
    expect(await engine.getFence('r')).toBe(0n);
  });

  it('F5: without a takeover the old holder still writes; after the takeover it is fenced out', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1' });
    // The lease of token 1 expired, nobody took over: the fence is still 1.
    expect((await engine.write({ resource: 'r', token: 1n, resultId: 'a', payload: text('p') })).kind).toBe('applied');
    await engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2' });
    expect(await engine.write({ resource: 'r', token: 1n, resultId: 'b', payload: text('p') })).toEqual({
      kind: 'stale',
      fence: 2n,
    });
    expect((await engine.write({ resource: 'r', token: 2n, resultId: 'b', payload: text('p') })).kind).toBe('applied');
  });
});

describe('SinkEngine fences (F4)', () => {
  it('moves up, accepts the same grant retry, refuses regressions without change', async () => {
    const { engine, disk } = setup();
    expect(await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'g5' })).toEqual({
      kind: 'advanced',
      fence: 5n,
    });
    expect(await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'g5' })).toEqual({
      kind: 'retry-same-grant',
      fence: 5n,
    });
    const before = snapshot(disk);
    expect(await engine.advanceFence({ resource: 'r', token: 5n, grantId: 'other' })).toEqual({
      kind: 'regression',
      fence: 5n,
    });
    expect(await engine.advanceFence({ resource: 'r', token: 4n, grantId: 'g4' })).toEqual({
      kind: 'regression',
      fence: 5n,
    });
    expect(snapshot(disk)).toEqual(before);
    expect(await engine.getFence('r')).toBe(5n);
  });

  it('a takeover on resource X leaves resource Y writes accepted', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'X', token: 1n, grantId: 'x1' });
    await engine.advanceFence({ resource: 'Y', token: 1n, grantId: 'y1' });
    await engine.advanceFence({ resource: 'X', token: 2n, grantId: 'x2' });
    expect((await engine.write({ resource: 'X', token: 1n, resultId: 'a', payload: text('p') })).kind).toBe('stale');
    expect((await engine.write({ resource: 'Y', token: 1n, resultId: 'a', payload: text('p') })).kind).toBe('applied');
    expect(await engine.getFence('Y')).toBe(1n);
  });
});

describe('SinkEngine critical section and durability (F2, F6)', () => {
  it('F2: a write queued behind an AdvanceFence sees the new fence; one queued before it is applied', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1' });
    const before = engine.write({ resource: 'r', token: 1n, resultId: 'before', payload: text('p') });
    const advance = engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2' });
    const after = engine.write({ resource: 'r', token: 1n, resultId: 'after', payload: text('p') });
    expect(await before).toEqual({ kind: 'applied', fence: 1n });
    expect(await advance).toEqual({ kind: 'advanced', fence: 2n });
    expect(await after).toEqual({ kind: 'stale', fence: 2n });
    expect(await engine.read('r', 'after')).toEqual({ kind: 'not-found' });
  });

  it('F2: concurrent writes of one result_id store exactly one payload (S6)', async () => {
    const { engine } = setup();
    await engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1' });
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text(`p${i}`) }),
      ),
    );
    expect(outcomes.filter((o) => o.kind === 'applied')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'conflict')).toHaveLength(19);
    const stored = await engine.read('r', 'x');
    expect(stored.kind === 'found' && new TextDecoder().decode(stored.payload)).toBe('p0');
  });

  it('F6: the lock is released before the fsync (pipelining) but no answer comes before it', async () => {
    const { engine, store, backend } = setup({ manualSync: true });
    const advance = tracked(engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1' }));
    const write = tracked(engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p') }));
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
    void engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1' });
    await turn();
    backend.syncNext();
    await turn();
    const original = tracked(engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p') }));
    const replay = tracked(engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p') }));
    await turn();
    expect(replay.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(original.value).toEqual({ kind: 'applied', fence: 1n });
    expect(replay.value).toEqual({ kind: 'replayed', fence: 1n });
  });

  it('F6: a refusal resting on a pending fence waits for it; the same grant retry waits too', async () => {
    const { engine, backend } = setup({ manualSync: true });
    const advance = tracked(engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2' }));
    const retry = tracked(engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2' }));
    const stale = tracked(engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p') }));
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
    void engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1' });
    const order: string[] = [];
    const calls = [
      engine.write({ resource: 'r', token: 1n, resultId: 'a', payload: text('p') }).then(() => order.push('a')),
      engine.advanceFence({ resource: 'r', token: 2n, grantId: 'g2' }).then(() => order.push('advance')),
      engine.write({ resource: 'r', token: 1n, resultId: 'b', payload: text('p') }).then(() => order.push('b')),
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
    const fence = tracked(engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1' }));
    await turn(); // the advance is committed, not yet synced
    const read = tracked(engine.getFence('r'));
    await turn();
    expect(read.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(fence.settled).toBe(true);
    expect(read.value).toBe(1n);
    const write = tracked(engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p') }));
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
    const advance = engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1' });
    const write = engine.write({ resource: 'r', token: 1n, resultId: 'x', payload: text('p') });
    await turn();
    backend.failNext();
    await expect(advance).rejects.toBeInstanceOf(StoreFailedError);
    await expect(write).rejects.toBeInstanceOf(StoreFailedError);
    await expect(engine.write({ resource: 'q', token: 1n, resultId: 'x', payload: text('p') })).rejects.toBeInstanceOf(
      StoreFailedError,
    );
    await expect(engine.getFence('r')).rejects.toBeInstanceOf(StoreFailedError);
    expect(disk.fences.size + disk.results.size).toBe(0);
  });

  it("different resources do not wait for each other's locks", async () => {
    const { engine, store } = setup({ manualSync: true });
    // Both decisions are taken although neither batch is synced.
    void engine.advanceFence({ resource: 'a', token: 1n, grantId: 'a1' });
    void engine.advanceFence({ resource: 'b', token: 1n, grantId: 'b1' });
    await turn();
    expect(store.stats.commits).toBe(2);
  });
});
