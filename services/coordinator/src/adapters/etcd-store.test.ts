// The etcd store on a real etcd, past the shared contract suite: H3's
// guard (a write after the election key was deleted or won again changes
// nothing and fails the store with NotLeaderError as the cause), the format
// stamp, T3 on an etcd that stops answering, one transaction per write, L6's
// reservation blocks, and loads and deletes larger than one etcd request.
import { randomUUID } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotLeaderError, StoreFailedError } from '@fencer/common';
import { StartupError } from '@fencer/cli-kit';
import { startTestEtcd, type TestEtcd } from '@fencer/testkit';
import { sampleGrant, sampleRecord } from '../../test/doubles/records.js';
import { encodeRequest, RESERVATION_BLOCK } from './store-records.js';
import { ETCD_STORE_FORMAT, EtcdStore, type LeadershipGuard } from './etcd-store.js';

let etcd: TestEtcd;
let client: Etcd3;
beforeAll(async () => {
  etcd = await startTestEtcd();
  client = new Etcd3({ hosts: etcd.hosts });
}, 60_000);
afterAll(async () => {
  client?.close();
  await etcd?.stop();
}, 30_000);

const [grant, record] = [sampleGrant, sampleRecord];

const freshPrefix = () => `/fencer-test-${randomUUID()}/`;
const open = (prefix: string, guard?: LeadershipGuard, callTimeoutMs = 5_000) =>
  EtcdStore.open({ client, prefix, callTimeoutMs, ...(guard ? { guard } : {}) });

/** Wins the "election" as the leadership adapter would: puts the leader key, returns the guard. */
async function elect(prefix: string): Promise<LeadershipGuard> {
  const key = `${prefix}leader`;
  await client.put(key).value('127.0.0.1:1');
  const { kvs } = await client.get(key).exec();
  return { key, createRevision: kvs[0]!.create_revision };
}

/** A key's stored value and the revision it was last written at. */
async function stored(key: string): Promise<{ value: string; modRevision: string } | undefined> {
  const kv = (await client.get(key).exec()).kvs[0];
  return kv && { value: kv.value.toString('utf8'), modRevision: kv.mod_revision };
}

describe('EtcdStore guard (H3)', () => {
  it.each([
    ['deleted', async (guard: LeadershipGuard) => void (await client.delete().key(guard.key))],
    [
      'deleted and won again by another replica',
      async (guard: LeadershipGuard) => {
        await client.delete().key(guard.key);
        await client.put(guard.key).value('127.0.0.1:2');
      },
    ],
  ])(
    'a write after the election key was %s changes nothing and fails the store (cause NotLeaderError)',
    async (_name, depose) => {
      const prefix = freshPrefix();
      const guard = await elect(prefix);
      const store = await open(prefix, guard);
      await store.reserveToken('r', 1n);
      await store.recordGrant(grant(), record());
      const before = await client.getAll().prefix(prefix).strings();

      await depose(guard);
      const error = await store.changeTtl(grant({ ttlMs: 9_000 })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreFailedError);
      expect((error as StoreFailedError).cause).toBeInstanceOf(NotLeaderError);
      expect(await store.whenFailed()).toBe(error);
      // Every later call, reads included, meets the same failure and writes nothing.
      await expect(store.recordGrant(grant({ token: 2n }), record({ requestId: 'q2', token: 2n }))).rejects.toBe(error);
      await expect(store.reserveToken('other', 1n)).rejects.toBe(error);
      await expect(store.loadResource('r')).rejects.toBe(error);
      const after = await client.getAll().prefix(prefix).strings();
      delete before[guard.key];
      delete after[guard.key];
      expect(after).toEqual(before);
    },
  );

  it.each([
    ['reserveToken', (store: EtcdStore) => store.reserveToken('fresh', 1n)],
    ['recordGrant', (store: EtcdStore) => store.recordGrant(grant(), record())],
    ['endGrant', (store: EtcdStore) => store.endGrant(grant({ ended: 'released' }))],
    ['deleteRequests', (store: EtcdStore) => store.deleteRequests(['q1'])],
  ])('%s is guarded too', async (_name, write) => {
    const prefix = freshPrefix();
    const guard = await elect(prefix);
    const store = await open(prefix, guard);
    await client.delete().key(guard.key);
    const error = await write(store).catch((e: unknown) => e);
    expect((error as StoreFailedError).cause).toBeInstanceOf(NotLeaderError);
    expect(Object.keys(await client.getAll().prefix(prefix).strings())).toEqual([`${prefix}format`]);
  });

  it('a leader whose guard holds writes, and a standby with an old guard cannot stamp a fresh prefix', async () => {
    const prefix = freshPrefix();
    const guard = await elect(prefix);
    const store = await open(prefix, guard);
    await store.recordGrant(grant(), record());
    expect((await store.load()).grants).toEqual([grant()]);

    const other = freshPrefix();
    const stale = { key: `${other}leader`, createRevision: guard.createRevision };
    const error = await open(other, stale).catch((e: unknown) => e);
    expect((error as StoreFailedError).cause).toBeInstanceOf(NotLeaderError);
    expect(await client.getAll().prefix(other).keys()).toEqual([]);
  });
});

describe('EtcdStore format stamp', () => {
  it('stamps a fresh prefix (the election key may be there already) and opens it again', async () => {
    const prefix = freshPrefix();
    await elect(prefix);
    await (await open(prefix)).close();
    expect((await stored(`${prefix}format`))?.value).toBe(ETCD_STORE_FORMAT);
    await expect(open(prefix)).resolves.toBeInstanceOf(EtcdStore);
  });

  it.each([
    ['another format', { format: 'fencer-coordinator/2' }, /holds data of format "fencer-coordinator\/2"/],
    ['keys of something else', { 'app/config': 'x' }, /holds keys that are not a fencer coordinator's/],
  ])('refuses a prefix holding %s with a one-line StartupError, writing nothing', async (_name, keys, message) => {
    const prefix = freshPrefix();
    for (const [key, value] of Object.entries(keys)) await client.put(`${prefix}${key}`).value(value);
    const error = await open(prefix).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(prefix);
    expect((error as Error).message).not.toContain('\n');
    expect(Object.keys(await client.getAll().prefix(prefix).strings()).sort()).toEqual(
      Object.keys(keys).map((key) => `${prefix}${key}`),
    );
  });

  it("refuses a prefix that does not end in '/'", async () => {
    await expect(open('/fencer')).rejects.toBeInstanceOf(StartupError);
  });
});

describe('EtcdStore writes', () => {
  it('recordGrant is one transaction: the grant and its request record land at one revision (L3 step 3)', async () => {
    const prefix = freshPrefix();
    const store = await open(prefix);
    await store.recordGrant(grant(), record());
    const [grantKey, requestKey] = [await stored(`${prefix}grant/r`), await stored(`${prefix}request/q1`)];
    expect(grantKey?.modRevision).toBeDefined();
    expect(grantKey?.modRevision).toBe(requestKey?.modRevision);
  });

  it('reserves tokens in blocks (L6): a token under the stored ceiling writes nothing, even in a new term', async () => {
    const prefix = freshPrefix();
    const store = await open(prefix);
    const counter = `${prefix}counter/r`;
    await store.reserveToken('r', 1n);
    const first = await stored(counter);
    expect(first?.value).toBe(String(RESERVATION_BLOCK));
    await store.reserveToken('r', 2n);
    await store.reserveToken('r', RESERVATION_BLOCK);
    expect(await stored(counter)).toEqual(first);
    // A new store (the next leader's) reads the ceiling from etcd instead of writing.
    await (await open(prefix)).reserveToken('r', RESERVATION_BLOCK - 1n);
    expect(await stored(counter)).toEqual(first);
    await store.reserveToken('r', RESERVATION_BLOCK + 1n);
    expect((await stored(counter))?.value).toBe(String(2n * RESERVATION_BLOCK));
  });

  it('loads state larger than one etcd page, and deletes more records than one transaction takes', async () => {
    const prefix = freshPrefix();
    const store = await open(prefix);
    const ids = Array.from({ length: 2_600 }, (_, i) => `q${i}`);
    // Written straight into etcd, 128 to a transaction: 2,600 records through the store would take a while.
    for (let from = 0; from < ids.length; from += 128)
      await client
        .if(`${prefix}format`, 'Version', '>', 0)
        .then(
          ...ids
            .slice(from, from + 128)
            .map((id) => client.put(`${prefix}request/${id}`).value(encodeRequest(record({ requestId: id })))),
        )
        .commit();
    const loaded = await store.load();
    expect(loaded.requests.map((r) => r.requestId).sort()).toEqual([...ids].sort());

    await store.deleteRequests(ids.slice(0, 300));
    expect((await store.load()).requests).toHaveLength(ids.length - 300);
  }, 60_000);
});

describe('EtcdStore on an etcd that stops answering (T3)', () => {
  it('fails the store when a call outlives callTimeoutMs; every later call rejects', async () => {
    const prefix = freshPrefix();
    // A client of its own: etcd3 then holds its failed host back for a while (its circuit breaker).
    const own = new Etcd3({ hosts: etcd.hosts });
    try {
      const store = await EtcdStore.open({ client: own, prefix, callTimeoutMs: 500 });
      await store.recordGrant(grant(), record());
      const [member] = etcd.cluster.members;
      await member!.kill('SIGSTOP');
      try {
        const error = await store.changeTtl(grant({ ttlMs: 9_000 })).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StoreFailedError);
        expect((error as StoreFailedError).cause).not.toBeInstanceOf(NotLeaderError);
        expect(await store.whenFailed()).toBe(error);
      } finally {
        await member!.kill('SIGCONT');
      }
      // etcd is back, and the store stays failed: a new term opens a new store.
      await expect(store.loadResource('r')).rejects.toBeInstanceOf(StoreFailedError);
      // The timed-out write was never acknowledged, but it may still land once etcd resumes (as a write
      // just before a crash): either TTL is a correct state to take over (L7 keeps the longer one valid).
      const { grants } = await (await open(prefix)).load();
      expect([[grant()], [grant({ ttlMs: 9_000 })]]).toContainEqual(grants);
    } finally {
      own.close();
    }
  }, 30_000);
});
