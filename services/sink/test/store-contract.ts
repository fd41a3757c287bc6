// The one contract every SinkStore implementation must meet (run against the
// in-memory and the LevelDB store): read-your-pending-writes (F2), durable
// before acknowledged and across close-and-reopen (F6, S5), group commit
// (F6), exact bytes (S6), and fail-stop after an I/O error.
import { describe, expect, it } from 'vitest';
import type { GroupCommitStore } from '../src/core/group-commit.js';
import { StoreFailedError } from '@fencer/common';
import type { StoreOp } from '../src/core/store.js';

/** A place a store lives in; reopening it after close is how durability is checked. */
export interface StoreLocation {
  /** Opens a store on this location (at most one open at a time). */
  open(): Promise<{ store: GroupCommitStore; breakStorage(): Promise<void> }>;
  remove(): Promise<void>;
}

const fenceOp = (resource: string, fence: bigint, grantId = `g${fence}`, ownerId: string | null = null): StoreOp => ({
  kind: 'fence',
  resource,
  record: { fence, grantId, ownerId },
});
const resultOp = (resource: string, resultId: string, token: bigint, payload: Uint8Array): StoreOp => ({
  kind: 'result',
  resource,
  resultId,
  result: { token, payload },
});
const text = (value: string) => new TextEncoder().encode(value);
const plain = (payload: Uint8Array | undefined) => (payload === undefined ? undefined : Array.from(payload));

/** Registers the contract tests for one implementation. */
export function describeStoreContract(name: string, newLocation: () => Promise<StoreLocation>): void {
  const withLocation = (test: (location: StoreLocation) => Promise<void>) => async () => {
    const location = await newLocation();
    try {
      await test(location);
    } finally {
      await location.remove();
    }
  };

  describe(`SinkStore contract: ${name}`, () => {
    it(
      'A4: durableResults lists one resource only, highest token first, bounded by the limit, once durable',
      withLocation(async (location) => {
        const { store } = await location.open();
        await store.commit([
          resultOp('r', 'b', 1n, text('12')),
          resultOp('r', 'a', 2n, text('123')),
          resultOp('r', 'c', 2n, text('')),
          // neighbours a prefix scan could wrongly include
          resultOp('r2', 'x', 9n, text('x')),
          resultOp('', 'r', 9n, text('x')),
        ]);
        // Committed, not yet durable: still listed, because the listing waits for it.
        void store.commit([resultOp('r', 'd', 3n, text('1234'))]);
        const summary = (results: Awaited<ReturnType<typeof store.durableResults>>) =>
          results.map((r) => [r.resultId, r.token, r.sizeBytes]);
        expect(summary(await store.durableResults('r', 10))).toEqual([
          ['d', 3n, 4],
          ['a', 2n, 3],
          ['c', 2n, 0],
          ['b', 1n, 2],
        ]);
        expect(summary(await store.durableResults('r', 1))).toEqual([['d', 3n, 4]]);
        expect(await store.durableResults('none', 10)).toEqual([]);
        await store.close();
      }),
    );

    it(
      'an empty store has no fence and no result',
      withLocation(async (location) => {
        const { store } = await location.open();
        expect(await store.fence('r')).toBeUndefined();
        expect(await store.result('r', 'x')).toBeUndefined();
        expect(await store.durableFence('r')).toBeUndefined();
        expect(await store.durableResult('r', 'x')).toBeUndefined();
        await store.settled();
        await store.close();
      }),
    );

    it(
      'a key read as missing is found once stored, however long and non-ASCII (S5, S6)',
      withLocation(async (location) => {
        const { store } = await location.open();
        const astral = '\u{1F9EA}'.repeat(128); // 512 UTF-8 bytes, the V2 maximum
        for (const [resource, resultId] of [
          [astral, astral],
          ['r', '\u00e9'.repeat(300)],
        ] as const) {
          expect(await store.fence(resource)).toBeUndefined();
          expect(await store.result(resource, resultId)).toBeUndefined();
          await store.commit([fenceOp(resource, 1n), resultOp(resource, resultId, 1n, text('p'))]);
          expect((await store.durableFence(resource))?.fence).toBe(1n);
          expect(plain((await store.durableResult(resource, resultId))?.payload)).toEqual(plain(text('p')));
        }
        await store.close();
      }),
    );

    it(
      'F2: a commit is visible to the next read before it is durable',
      withLocation(async (location) => {
        const { store } = await location.open();
        const durable = store.commit([fenceOp('r', 3n), resultOp('r', 'x', 3n, text('p'))]);
        // No I/O callback can run between the commit and these overlay reads.
        expect(await store.fence('r')).toEqual({ fence: 3n, grantId: 'g3', ownerId: null });
        expect(plain((await store.result('r', 'x'))?.payload)).toEqual(plain(text('p')));
        expect(store.stats.durableOps).toBe(0);
        expect(store.stats.pending).toBe(2);
        await durable;
        expect(store.stats.durableOps).toBe(2);
        expect(store.stats.pending).toBe(0);
        expect(await store.fence('r')).toEqual({ fence: 3n, grantId: 'g3', ownerId: null });
        await store.close();
      }),
    );

    it(
      'F6: a durable read of a pending value answers only after its batch is synced',
      withLocation(async (location) => {
        const { store } = await location.open();
        const order: string[] = [];
        const committed = store
          .commit([fenceOp('r', 7n), resultOp('r', 'x', 7n, text('p'))])
          .then(() => order.push('durable'));
        const fence = store.durableFence('r').then((value) => (order.push('read fence'), value));
        const result = store.durableResult('r', 'x').then((value) => (order.push('read result'), value));
        await Promise.all([committed, fence, result]);
        expect(order[0]).toBe('durable');
        expect((await fence)?.fence).toBe(7n);
        expect((await result)?.token).toBe(7n);
        await store.close();
      }),
    );

    it(
      'S5: committed ops survive close and reopen with exact bytes',
      withLocation(async (location) => {
        const binary = Uint8Array.from([0, 255, 0, 1, 0x0a, 0x00]);
        const big = new Uint8Array(200_000).map((_, i) => (i * 7) % 256);
        const maxToken = 2n ** 64n - 1n;
        const first = await location.open();
        await first.store.commit([fenceOp('r', 1n, 'grant-ü')]);
        await Promise.all([
          first.store.commit([resultOp('r', 'binary', 1n, binary)]),
          first.store.commit([resultOp('r', 'empty', 1n, new Uint8Array(0))]),
          first.store.commit([resultOp('r', 'big', 1n, big)]),
          first.store.commit([fenceOp('ресурс/✓', maxToken), resultOp('ресурс/✓', 'id ✓', maxToken, text('unicode'))]),
          // resource+result_id pairs that a naive concatenation would confuse
          first.store.commit([resultOp('a', 'bc', 1n, text('a|bc'))]),
          first.store.commit([resultOp('ab', 'c', 1n, text('ab|c'))]),
          // ids spelled like the on-disk prefixes and the format stamp
          first.store.commit([fenceOp('!meta!format', 9n), resultOp('!fence!', '!result!', 9n, text('bangs'))]),
        ]);
        await first.store.close();

        const { store } = await location.open();
        expect(await store.fence('r')).toEqual({ fence: 1n, grantId: 'grant-ü', ownerId: null });
        expect(plain((await store.result('r', 'binary'))?.payload)).toEqual(plain(binary));
        expect(plain((await store.result('r', 'empty'))?.payload)).toEqual([]);
        expect(plain((await store.durableResult('r', 'big'))?.payload)).toEqual(plain(big));
        expect(await store.durableFence('ресурс/✓')).toEqual({
          fence: maxToken,
          grantId: `g${maxToken}`,
          ownerId: null,
        });
        expect((await store.result('ресурс/✓', 'id ✓'))?.token).toBe(maxToken);
        expect(plain((await store.result('a', 'bc'))?.payload)).toEqual(plain(text('a|bc')));
        expect(plain((await store.result('ab', 'c'))?.payload)).toEqual(plain(text('ab|c')));
        expect(await store.result('ab', 'bc')).toBeUndefined();
        expect((await store.fence('!meta!format'))?.fence).toBe(9n);
        expect(await store.fence('!fence!')).toBeUndefined();
        expect(plain((await store.result('!fence!', '!result!'))?.payload)).toEqual(plain(text('bangs')));
        await store.close();
      }),
    );

    it(
      'A5: the owner a fence is bound to survives close and reopen; a later unbound fence binds no one',
      withLocation(async (location) => {
        const first = await location.open();
        await first.store.commit([fenceOp('owned', 4n, 'grant-4', 'worker-ä ✓'), fenceOp('rebound', 1n, 'g1', 'a')]);
        await first.store.commit([fenceOp('rebound', 2n, 'g2', null)]);
        await first.store.close();

        const { store } = await location.open();
        expect(await store.durableFence('owned')).toEqual({ fence: 4n, grantId: 'grant-4', ownerId: 'worker-ä ✓' });
        expect(await store.durableFence('rebound')).toEqual({ fence: 2n, grantId: 'g2', ownerId: null });
        await store.close();
      }),
    );

    it(
      'a later commit of the same key wins, pending and after reopen',
      withLocation(async (location) => {
        const first = await location.open();
        const a = first.store.commit([fenceOp('r', 1n)]);
        const b = first.store.commit([fenceOp('r', 2n)]);
        // Within one batch too: the later op of a key is the one stored.
        const c = first.store.commit([fenceOp('q', 2n), fenceOp('q', 5n), fenceOp('q', 3n)]);
        expect((await first.store.fence('r'))?.fence).toBe(2n);
        expect((await first.store.fence('q'))?.fence).toBe(3n);
        await a;
        // The older batch leaving the overlay must not expose an older value.
        expect((await first.store.fence('r'))?.fence).toBe(2n);
        await Promise.all([b, c]);
        expect((await first.store.durableFence('r'))?.fence).toBe(2n);
        expect((await first.store.durableFence('q'))?.fence).toBe(3n);
        await first.store.close();
        const { store } = await location.open();
        expect((await store.fence('r'))?.fence).toBe(2n);
        expect((await store.fence('q'))?.fence).toBe(3n);
        await store.close();
      }),
    );

    it(
      'F6: concurrent commits are grouped into fewer synced batches, all durable',
      withLocation(async (location) => {
        const first = await location.open();
        const commits = 64;
        await Promise.all(
          Array.from({ length: commits }, (_, i) => first.store.commit([resultOp('r', `x${i}`, 1n, text(`p${i}`))])),
        );
        const { batches, commits: counted, durableOps, pending } = first.store.stats;
        expect(counted).toBe(commits);
        expect(durableOps).toBe(commits);
        expect(batches).toBeLessThan(commits);
        expect(pending).toBe(0);
        await first.store.close();
        const { store } = await location.open();
        for (let i = 0; i < commits; i++)
          expect(plain((await store.result('r', `x${i}`))?.payload)).toEqual(plain(text(`p${i}`)));
        await store.close();
      }),
    );

    it(
      'F2: the ops of one commit travel in one batch',
      withLocation(async (location) => {
        const { store } = await location.open();
        await store.commit([fenceOp('r', 1n), resultOp('r', 'x', 1n, text('p')), resultOp('q', 'y', 1n, text('q'))]);
        expect(store.stats.batches).toBe(1);
        expect(store.stats.durableOps).toBe(3);
        await store.close();
      }),
    );

    it(
      'fail-stop: after an I/O error every commit and read is refused',
      withLocation(async (location) => {
        const { store, breakStorage } = await location.open();
        await store.commit([fenceOp('r', 1n)]);
        await breakStorage();
        await expect(store.commit([fenceOp('r', 2n)])).rejects.toBeInstanceOf(StoreFailedError);
        expect(await store.whenFailed()).toBeInstanceOf(StoreFailedError);
        await expect(store.commit([fenceOp('q', 1n)])).rejects.toBeInstanceOf(StoreFailedError);
        await expect(store.fence('r')).rejects.toBeInstanceOf(StoreFailedError);
        await expect(store.durableFence('r')).rejects.toBeInstanceOf(StoreFailedError);
        await expect(store.settled()).rejects.toBeInstanceOf(StoreFailedError);
        await store.close().catch(() => undefined);
      }),
    );

    it(
      'a closed store refuses commits',
      withLocation(async (location) => {
        const { store } = await location.open();
        await store.close();
        await expect(store.commit([fenceOp('r', 1n)])).rejects.toBeInstanceOf(StoreFailedError);
      }),
    );
  });
}
