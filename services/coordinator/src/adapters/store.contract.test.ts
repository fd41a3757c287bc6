// One contract suite for every LeaseStore, run on the in-memory, the
// LevelDB and the etcd store (H1, on a real etcd the suite starts), with a
// close-and-reopen step: what a store promises is what L3, L6, L7 and R3
// rely on after a restart (or, on etcd, a takeover: H4).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Level } from 'level';
import { StoreFailedError } from '@fencer/common';
import { StartupError } from '@fencer/cli-kit';
import { openLevelDb } from '@fencer/server-kit';
import { startTestEtcd, type TestEtcd } from '@fencer/testkit';
import type { LeaseStore } from '../core/store.js';
import { sampleGrant, sampleRecord } from '../../test/doubles/records.js';
import { MemoryDisk, MemoryStore } from '../../test/doubles/memory-store.js';
import { LEVEL_STORE_FORMAT, LevelStore } from './level-store.js';
import { EtcdStore } from './etcd-store.js';

// One etcd for the file, started by the first etcd harness; each harness has a prefix of its own.
let etcd: Promise<TestEtcd> | undefined;
afterAll(async () => (await etcd)?.stop(), 30_000);

interface Harness {
  /** Opens the store over the same backing disk each time. */
  open(): Promise<LeaseStore>;
  /** Makes the last opened store's next I/O fail, as a full disk would. */
  breakStorage(): Promise<void>;
  dispose(): void;
}

const harnesses: [string, () => Harness][] = [
  [
    'MemoryStore',
    () => {
      const disk = new MemoryDisk();
      return {
        open: async () => new MemoryStore(disk),
        breakStorage: async () => void (disk.failNext = new Error('No space left on device')),
        dispose() {},
      };
    },
  ],
  [
    'LevelStore',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'fencer-store-'));
      let db: Level<string, string> | undefined;
      return {
        // As LevelStore.open does, keeping the database to break it.
        async open() {
          db = await openLevelDb<string>(join(dir, 'data'), {
            service: 'coordinator',
            format: LEVEL_STORE_FORMAT,
            valueEncoding: 'utf8',
          });
          const store = new LevelStore(db);
          await store.ready();
          return store;
        },
        // Closing LevelDB underneath the store makes its next write fail as an I/O error would.
        breakStorage: async () => db?.close(),
        dispose: () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
  [
    'EtcdStore',
    () => {
      const prefix = `/fencer-contract-${randomUUID()}/`;
      // A client per opened store, as each leadership term has its own store.
      const clients: Etcd3[] = [];
      return {
        async open() {
          etcd ??= startTestEtcd();
          const client = new Etcd3({ hosts: (await etcd).hosts });
          clients.push(client);
          return EtcdStore.open({ client, prefix, callTimeoutMs: 5_000 });
        },
        // A closed client fails the store's next call as a lost etcd would.
        breakStorage: async () => clients.at(-1)?.close(),
        dispose: () => clients.forEach((client) => client.close()),
      };
    },
  ],
];

const MAX_U64 = 2n ** 64n - 1n;
const [grant, record] = [sampleGrant, sampleRecord];

describe.each(harnesses)('LeaseStore contract: %s', (_name, make) => {
  let harness: Harness;
  let open: LeaseStore[] = [];
  const reopen = async () => {
    await Promise.all(open.map((s) => s.close()));
    const store = await harness.open();
    open = [store];
    return store;
  };

  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    open = [];
    harness.dispose();
  });

  const start = async () => {
    harness = make();
    return reopen();
  };

  it('starts empty', async () => {
    const store = await start();
    expect(await store.load()).toEqual({ counters: new Map(), grants: [], requests: [] });
  });

  it('P2: records the sink names at the first claim and answers every later claim with them, across reopen', async () => {
    const store = await start();
    expect(await store.claimSinkNames(['b', 'a'])).toEqual(['a', 'b']);
    expect(await store.claimSinkNames(['a', 'c'])).toEqual(['a', 'b']);
    const reopened = await reopen();
    expect(await reopened.claimSinkNames(['default'])).toEqual(['a', 'b']);
    // Not lease state: load() never shows it.
    expect(await reopened.load()).toEqual({ counters: new Map(), grants: [], requests: [] });
  });

  it('keeps reserved counters across close and reopen (L6), full uint64 range', async () => {
    const store = await start();
    await store.reserveToken('r', 1n);
    await store.reserveToken('r', 2n);
    await store.reserveToken('big', MAX_U64);
    const state = await (await reopen()).load();
    // At or above what was reserved (a store may reserve a block), never past uint64 (T1).
    expect(state.counters.get('r')).toBeGreaterThanOrEqual(2n);
    expect(state.counters.get('big')).toBe(MAX_U64);
  });

  it('records a grant with its request record, and keeps both across reopen (L3 step 3, R1)', async () => {
    const store = await start();
    await store.reserveToken('r', 5n);
    await store.recordGrant(
      grant({ token: 5n, incarnation: MAX_U64, resource: 'r' }),
      record({ token: 5n, incarnation: MAX_U64 }),
    );
    const state = await (await reopen()).load();
    expect(state.grants).toEqual([grant({ token: 5n, incarnation: MAX_U64 })]);
    expect(state.requests).toEqual([record({ token: 5n, incarnation: MAX_U64 })]);
  });

  it('a later grant replaces the latest grant of its resource; request records accumulate', async () => {
    const store = await start();
    await store.recordGrant(grant({ token: 1n }), record({ requestId: 'q1', token: 1n }));
    await store.recordGrant(
      grant({ token: 2n, ownerId: 'bob' }),
      record({ requestId: 'q2', token: 2n, ownerId: 'bob' }),
    );
    await store.recordGrant(grant({ resource: 'other', token: 1n }), record({ requestId: 'q3', resource: 'other' }));
    const state = await (await reopen()).load();
    expect(new Map(state.grants.map((g) => [g.resource, g.token]))).toEqual(
      new Map([
        ['r', 2n],
        ['other', 1n],
      ]),
    );
    expect(state.requests.map((r) => r.requestId).sort()).toEqual(['q1', 'q2', 'q3']);
  });

  it('changeTtl and endGrant persist renewals, releases and fencing (L4, L5, L8) across reopen', async () => {
    const store = await start();
    await store.recordGrant(grant({ resource: 'a' }), record({ requestId: 'qa', resource: 'a' }));
    await store.recordGrant(grant({ resource: 'b' }), record({ requestId: 'qb', resource: 'b' }));
    await store.recordGrant(grant({ resource: 'c' }), record({ requestId: 'qc', resource: 'c' }));
    await store.changeTtl(grant({ resource: 'a', ttlMs: 9_000 }));
    await store.endGrant(grant({ resource: 'b', ended: 'released' }));
    await store.endGrant(grant({ resource: 'c', ended: 'fenced' }));
    const state = await (await reopen()).load();
    const byResource = new Map(state.grants.map((g) => [g.resource, g]));
    expect(byResource.get('a')).toEqual(grant({ resource: 'a', ttlMs: 9_000 }));
    expect(byResource.get('b')?.ended).toBe('released');
    expect(byResource.get('c')?.ended).toBe('fenced');
  });

  it('deleteRequests drops exactly the named records (R3)', async () => {
    const store = await start();
    for (const id of ['q1', 'q2', 'q3']) await store.recordGrant(grant(), record({ requestId: id }));
    await store.deleteRequests(['q1', 'q3', 'never-there']);
    const state = await (await reopen()).load();
    expect(state.requests.map((r) => r.requestId)).toEqual(['q2']);
  });

  it('loadResource reads one resource back as load would, before and after reopen (V4)', async () => {
    const store = await start();
    expect(await store.loadResource('r')).toBeUndefined();
    await store.reserveToken('burned', 4n); // a failed grant: a counter and no grant
    await store.reserveToken('r', 7n);
    await store.recordGrant(grant({ token: 7n, incarnation: MAX_U64 }), record({ token: 7n }));
    await store.changeTtl(grant({ token: 7n, incarnation: MAX_U64, ttlMs: 9_000 }));
    // Not synced, and still what the next read must see.
    await store.endGrant(grant({ token: 7n, incarnation: MAX_U64, ttlMs: 9_000, ended: 'released' }));
    // Counters as load reads them: at or above what was reserved (a store may reserve a block).
    const { counters } = await store.load();
    expect(counters.get('r')).toBeGreaterThanOrEqual(7n);
    expect(counters.get('burned')).toBeGreaterThanOrEqual(4n);
    const expected = {
      r: {
        counter: counters.get('r'),
        grant: grant({ token: 7n, incarnation: MAX_U64, ttlMs: 9_000, ended: 'released' }),
      },
      burned: { counter: counters.get('burned'), grant: null },
      never: undefined,
    };
    const readAll = async (reader: LeaseStore) =>
      Object.fromEntries(
        await Promise.all(Object.keys(expected).map(async (r) => [r, await reader.loadResource(r)] as const)),
      );
    expect(await readAll(store)).toEqual(expected);
    expect(await readAll(await reopen())).toEqual(expected);
  });

  it('round-trips ids with any UTF-8 and separator-like characters', async () => {
    const store = await start();
    const resource = 'ünïcødé/!key:with~separators 🎯';
    await store.reserveToken(resource, 3n);
    await store.recordGrant(
      grant({ resource, token: 3n }),
      record({ requestId: `${resource}#req`, resource, token: 3n }),
    );
    const state = await (await reopen()).load();
    expect(state.counters.get(resource)).toBeGreaterThanOrEqual(3n);
    expect(state.grants[0]?.resource).toBe(resource);
    expect(state.requests[0]?.requestId).toBe(`${resource}#req`);
  });

  it('T3 fail-stop: after a failed write every call rejects with StoreFailedError; what was written before stays', async () => {
    const store = await start();
    await store.reserveToken('r', 1n);
    await store.recordGrant(grant(), record());
    await harness.breakStorage();
    const failed = store.recordGrant(grant({ token: 2n }), record({ requestId: 'q2', token: 2n }));
    await expect(failed).rejects.toBeInstanceOf(StoreFailedError);
    const failure = await store.whenFailed();
    expect(failure).toBeInstanceOf(StoreFailedError);
    // Every later call, writes of other keys and reads included, meets the same failure.
    await expect(store.endGrant(grant({ ended: 'released' }))).rejects.toBe(failure);
    await expect(store.reserveToken('q', 1_000_000n)).rejects.toBe(failure);
    await expect(store.changeTtl(grant({ ttlMs: 5_000 }))).rejects.toBe(failure);
    await expect(store.deleteRequests(['q1'])).rejects.toBe(failure);
    await expect(store.loadResource('r')).rejects.toBe(failure);
    await store.close().catch(() => undefined);
    const state = await (await reopen()).load();
    expect(state.grants).toEqual([grant()]);
    expect(state.requests).toEqual([record()]);
  });

  it('rejects writes after close', async () => {
    const store = await start();
    await store.close();
    open = [];
    await expect(store.reserveToken('r', 1n)).rejects.toThrow();
    await expect(store.loadResource('r')).rejects.toThrow();
  });
});

describe('LevelStore start-up errors', () => {
  it('refuses a second opener of the same directory with a StartupError naming the cause', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fencer-store-'));
    const first = await LevelStore.open(dir);
    try {
      const error = await LevelStore.open(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StartupError);
      expect((error as Error).message).toContain('in use by another process');
    } finally {
      await first.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a data path that is a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fencer-store-'));
    writeFileSync(join(dir, 'file'), 'x');
    try {
      await expect(LevelStore.open(join(dir, 'file'))).rejects.toBeInstanceOf(StartupError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
