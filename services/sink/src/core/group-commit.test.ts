// Group commit under a hand-cranked disk: what is in flight, what waits,
// what a crash loses, and fail-stop (F6).
import { describe, expect, it } from 'vitest';
import { turn } from '@fencer/testkit';
import { MemoryBackend, MemoryDisk, memoryStore } from '../../test/doubles/memory-store.js';
import { GroupCommitStore } from './group-commit.js';
import { StoreFailedError } from '@fencer/common';
import type { StoreOp } from './store.js';

const fenceOp = (resource: string, fence: bigint): StoreOp => ({
  kind: 'fence',
  resource,
  record: { fence, grantId: `g${fence}`, ownerId: null },
});
const resultOp = (resource: string, resultId: string, token = 1n): StoreOp => ({
  kind: 'result',
  resource,
  resultId,
  result: { token, payload: new Uint8Array([1]) },
});
/** Lets every already-queued callback and I/O-like turn run. */

function tracked(promise: Promise<unknown>) {
  const state = { settled: false, error: undefined as unknown };
  promise.then(
    () => (state.settled = true),
    (error) => ((state.settled = true), (state.error = error)),
  );
  return state;
}

describe('GroupCommitStore', () => {
  it('keeps one batch in flight; commits arriving meanwhile go together in the next one', async () => {
    const { store, backend } = memoryStore(new MemoryDisk(), { manualSync: true });
    const first = tracked(store.commit([resultOp('r', 'a')]));
    const rest = [
      store.commit([resultOp('r', 'b')]),
      store.commit([resultOp('q', 'c')]),
      store.commit([resultOp('r', 'd')]),
    ].map(tracked);
    await turn();
    expect(backend.waitingBatches).toBe(1);
    expect(first.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(first.settled).toBe(true);
    expect(rest.some((r) => r.settled)).toBe(false);
    expect(backend.waitingBatches).toBe(1); // b, c and d: one batch
    backend.syncNext();
    await turn();
    expect(rest.every((r) => r.settled && r.error === undefined)).toBe(true);
    expect(store.stats.batches).toBe(2);
  });

  it('F6: a commit is not acknowledged before its batch is synced, and a crash loses only unacknowledged ops', async () => {
    const disk = new MemoryDisk();
    const { store, backend } = memoryStore(disk, { manualSync: true });
    const synced = tracked(store.commit([fenceOp('r', 1n)]));
    const unsynced = tracked(store.commit([fenceOp('r', 2n), resultOp('r', 'x', 2n)]));
    backend.syncNext();
    await turn();
    expect(synced.settled).toBe(true);
    expect(unsynced.settled).toBe(false);
    // Crash: a new store over the same disk; the second batch never synced.
    const { store: reopened } = memoryStore(disk);
    expect((await reopened.fence('r'))?.fence).toBe(1n);
    expect(await reopened.result('r', 'x')).toBeUndefined();
  });

  it('a durable read of a pending value waits for that batch; of a synced value it does not', async () => {
    const { store, backend } = memoryStore(new MemoryDisk(), { manualSync: true });
    void store.commit([fenceOp('r', 1n)]);
    const read = store.durableFence('r');
    const state = tracked(read.then(() => undefined));
    await turn();
    expect(state.settled).toBe(false);
    backend.syncNext();
    expect((await read)?.fence).toBe(1n);
    expect((await store.durableFence('r'))?.fence).toBe(1n);
  });

  it('settled() waits for everything committed before it, across batches', async () => {
    const { store, backend } = memoryStore(new MemoryDisk(), { manualSync: true });
    void store.commit([fenceOp('r', 1n)]);
    void store.commit([fenceOp('q', 1n)]);
    const settled = tracked(store.settled());
    backend.syncNext();
    await turn();
    expect(settled.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(settled.settled).toBe(true);
  });

  it('fail-stop: a failed batch rejects itself and every queued batch; nothing reaches the disk', async () => {
    const disk = new MemoryDisk();
    const { store, backend } = memoryStore(disk, { manualSync: true });
    const inFlight = store.commit([fenceOp('r', 1n)]);
    const queued = store.commit([fenceOp('q', 1n)]);
    backend.failNext();
    await expect(inFlight).rejects.toBeInstanceOf(StoreFailedError);
    await expect(queued).rejects.toBeInstanceOf(StoreFailedError);
    await expect(store.commit([fenceOp('z', 1n)])).rejects.toBeInstanceOf(StoreFailedError);
    // The overlay is not trusted any more either.
    await expect(store.fence('r')).rejects.toBeInstanceOf(StoreFailedError);
    expect(backend.waitingBatches).toBe(0);
    expect(disk.fences.size).toBe(0);
    expect(await store.whenFailed()).toBeInstanceOf(StoreFailedError);
  });

  it('close() waits for pending batches before releasing the backend', async () => {
    const disk = new MemoryDisk();
    const { store, backend } = memoryStore(disk, { manualSync: true });
    void store.commit([fenceOp('r', 1n)]);
    const closed = tracked(store.close());
    await turn();
    expect(closed.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(closed.settled).toBe(true);
    expect(disk.fences.get('r')?.fence).toBe(1n);
  });

  it('every close() waits for the pending batches, not only the first', async () => {
    const disk = new MemoryDisk();
    const { store, backend } = memoryStore(disk, { manualSync: true });
    void store.commit([fenceOp('r', 1n)]);
    const first = tracked(store.close());
    const second = tracked(store.close());
    await turn();
    expect([first.settled, second.settled]).toEqual([false, false]);
    backend.syncNext();
    await turn();
    expect([first.settled, second.settled]).toEqual([true, true]);
    expect(disk.fences.get('r')?.fence).toBe(1n);
  });

  it('an empty commit settles with what is pending, and at once when nothing is', async () => {
    const { store, backend } = memoryStore(new MemoryDisk(), { manualSync: true });
    const idle = tracked(store.commit([]));
    await turn();
    expect(idle.settled).toBe(true);
    void store.commit([fenceOp('r', 1n)]);
    const empty = tracked(store.commit([]));
    await turn();
    expect(empty.settled).toBe(false);
    backend.syncNext();
    await turn();
    expect(empty).toEqual({ settled: true, error: undefined });
    expect(store.stats.batches).toBe(1);
  });

  it('F2: a commit with an op that cannot be keyed stores none of its ops', async () => {
    const { store } = memoryStore();
    // A NUL in a resource would let two (resource, result_id) pairs share a key (S6).
    const bad: StoreOp = {
      kind: 'result',
      resource: 'a\u0000b',
      resultId: 'c',
      result: { token: 1n, payload: new Uint8Array([1]) },
    };
    await expect(store.commit([fenceOp('r', 1n), bad])).rejects.toBeInstanceOf(TypeError);
    expect(await store.fence('r')).toBeUndefined();
    expect(store.stats).toMatchObject({ commits: 0, pending: 0, batches: 0 });
    await expect(store.result('a\u0000b', 'c')).rejects.toBeInstanceOf(TypeError);
    // The store is not failed by a bug in one call.
    await store.commit([fenceOp('r', 2n)]);
    expect((await store.durableFence('r'))?.fence).toBe(2n);
  });

  it('F2: a commit with a fence that cannot be stored unambiguously (NUL in grant_id) stores none of its ops', async () => {
    const { store } = memoryStore();
    const bad: StoreOp = { kind: 'fence', resource: 'q', record: { fence: 1n, grantId: 'g\u0000x', ownerId: 'a' } };
    await expect(store.commit([fenceOp('r', 1n), bad])).rejects.toBeInstanceOf(TypeError);
    expect(await store.fence('r')).toBeUndefined();
    expect(store.stats).toMatchObject({ commits: 0, pending: 0, batches: 0 });
  });

  it('a throwing onBatchDurable hook neither stalls nor fails the pipeline', async () => {
    const backend = new MemoryBackend(new MemoryDisk(), { manualSync: true });
    let calls = 0;
    const store = new GroupCommitStore(backend, {
      onBatchDurable: () => {
        calls++;
        throw new Error('metrics exporter is broken');
      },
    });
    const first = tracked(store.commit([fenceOp('r', 1n)]));
    const second = tracked(store.commit([fenceOp('q', 1n)]));
    await turn();
    backend.syncNext();
    await turn();
    backend.syncNext();
    await turn();
    expect([first, second]).toEqual([
      { settled: true, error: undefined },
      { settled: true, error: undefined },
    ]);
    expect(calls).toBe(2);
    const third = tracked(store.commit([fenceOp('z', 1n)]));
    backend.syncNext();
    await turn();
    expect(third).toEqual({ settled: true, error: undefined });
  });
});
