// A process kill cannot reveal a missing fsync (the page cache survives it),
// so what makes each LevelStore write durable is checked directly: the
// writes LeaseStore calls durable are LevelDB batches with sync: true.
import { describe, expect, it } from 'vitest';
import { Level } from 'level';
import { tempDir } from '@fencer/testkit';
import type { Grant, RequestRecord } from '../core/model.js';
import { LevelStore, RESERVATION_BLOCK } from './level-store.js';

const grant: Grant = { resource: 'r', ownerId: 'alice', incarnation: 1n, token: 1n, ttlMs: 1_000, ended: null };
const record: RequestRecord = {
  requestId: 'q',
  resource: 'r',
  ownerId: 'alice',
  incarnation: 1n,
  ttlMs: 1_000,
  token: 1n,
};

/** A LevelStore over a fresh directory whose every LevelDB batch is recorded (how many ops, synced or not). */
async function watchedStore(prefix: string) {
  const dir = tempDir(prefix);
  const db = new Level<string, string>(dir.path, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  const batches: { ops: number; sync: unknown }[] = [];
  const batch = db.batch.bind(db) as (ops: unknown[], options: { sync?: boolean }) => Promise<void>;
  (db as unknown as { batch: typeof batch }).batch = (ops, options) => {
    batches.push({ ops: ops.length, sync: options?.sync });
    return batch(ops, options);
  };
  const store = new LevelStore(db);
  await store.ready();
  return { store, batches, dir };
}

describe('LevelStore writes', () => {
  it('L3/L6/L4: reservations, grants and TTL changes are synced batches; ending a grant and collecting records are not', async () => {
    const { store, batches: calls, dir } = await watchedStore('fencer-coordinator-store-');
    try {
      const synced: [string, () => Promise<void>][] = [
        ['reserveToken', () => store.reserveToken('r', 1n)],
        ['recordGrant', () => store.recordGrant(grant, record)],
        ['changeTtl', () => store.changeTtl({ ...grant, ttlMs: 9_000 })],
      ];
      const unsynced: [string, () => Promise<void>][] = [
        ['endGrant', () => store.endGrant({ ...grant, ttlMs: 9_000, ended: 'released' })],
        ['deleteRequests', () => store.deleteRequests(['q'])],
      ];
      const seen: Record<string, unknown> = {};
      for (const [name, write] of [...synced, ...unsynced]) {
        calls.length = 0;
        await write();
        seen[name] = calls.map((c) => c.sync);
      }
      expect(seen).toEqual({
        reserveToken: [true],
        recordGrant: [true], // one batch: grant and request record land together
        changeTtl: [true],
        endGrant: [false],
        deleteRequests: [false],
      });
      expect(await store.load()).toEqual({
        counters: new Map([['r', RESERVATION_BLOCK]]),
        grants: [{ ...grant, ttlMs: 9_000, ended: 'released' }],
        requests: [],
      });
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it('L3/L6: one synced write reserves a block of tokens; past its ceiling, and after reopening, the next block is above it', async () => {
    const { store, batches, dir } = await watchedStore('fencer-coordinator-block-');
    const synced = () => batches.filter((b) => b.sync).length;
    const resource = 'ré'.repeat(40); // long and non-ASCII: the getSync case classic-level gets wrong with utf8 keys
    try {
      for (let token = 1n; token <= RESERVATION_BLOCK; token++) await store.reserveToken(resource, token);
      expect(synced()).toBe(1);
      await store.reserveToken(resource, RESERVATION_BLOCK + 1n);
      expect(synced()).toBe(2);
      expect((await store.loadResource(resource))?.counter).toBe(2n * RESERVATION_BLOCK);
      // T1: a block never passes 2^64−1; the token itself is reserved.
      const max = 2n ** 64n - 1n;
      await store.reserveToken('edge', max - 1n);
      expect((await store.loadResource('edge'))?.counter).toBe(max - 1n);
      await store.reserveToken('edge', max);
      expect((await store.loadResource('edge'))?.counter).toBe(max);
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it('group commit: synced writes arriving while one is in flight share the next fsync, each resolving once durable', async () => {
    const { store, batches, dir } = await watchedStore('fencer-coordinator-group-');
    try {
      const grants = Array.from({ length: 50 }, (_, i) => ({ ...grant, resource: `r${i}` }));
      await Promise.all(grants.map((g) => store.recordGrant(g, { ...record, requestId: `q-${g.resource}` })));
      // The first goes alone; the 49 that came meanwhile go together: 2 fsyncs, not 50.
      expect(batches).toEqual([
        { ops: 2, sync: true },
        { ops: 98, sync: true },
      ]);
      const state = await store.load();
      expect(state.grants.map((g) => g.resource).sort()).toEqual(grants.map((g) => g.resource).sort());
      expect(state.requests).toHaveLength(50);
    } finally {
      await store.close();
      dir.remove();
    }
  });
});
