import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StartupError } from '@fencer/cli-kit';
import { eventually, tempDir } from '@fencer/testkit';
import { Level } from 'level';
import { LevelBackend, openLevelStore } from './level-store.js';
import { describeStoreContract } from '../../test/store-contract.js';

describeStoreContract('LevelDB', async () => {
  const dir = tempDir('fencer-sink-store-');
  return {
    async open() {
      const { store, db } = await openLevelStore(dir.path);
      // Closing LevelDB underneath the store makes its next batch fail as an I/O error would.
      return { store, breakStorage: () => db.close() };
    },
    async remove() {
      dir.remove();
    },
  };
});

/** Runs `test` with a fresh temporary directory, removed afterwards. */
const inTempDir = (test: (root: string) => Promise<void>) => async () => {
  const dir = tempDir('fencer-sink-store-');
  try {
    await test(dir.path);
  } finally {
    dir.remove();
  }
};

describe('LevelDB store opening', () => {
  it(
    'creates a missing (nested) data directory',
    inTempDir(async (root) => {
      const path = join(root, 'a', 'b', 'sink');
      const { store } = await openLevelStore(path);
      expect(existsSync(path)).toBe(true);
      await store.close();
    }),
  );

  it(
    'a second open of the same directory fails with a StartupError naming the lock',
    inTempDir(async (root) => {
      const { store } = await openLevelStore(root);
      const second = openLevelStore(root);
      await expect(second).rejects.toBeInstanceOf(StartupError);
      await expect(second).rejects.toThrow(/in use by another process/);
      await store.close();
      // Once the holder closed, the directory opens again.
      const { store: again } = await openLevelStore(root);
      await again.close();
    }),
  );

  it(
    'refuses a data directory of another on-disk format, and releases it',
    inTempDir(async (root) => {
      const db = new Level<string, string>(root);
      await db.sublevel('meta').put('format', '99');
      await db.close();
      await expect(openLevelStore(root)).rejects.toBeInstanceOf(StartupError);
      // The refusal closed the database: another opener gets the lock.
      await db.open();
      await db.close();
    }),
  );

  it(
    "refuses a database that is not the sink's (keys, no format stamp) and writes nothing into it",
    inTempDir(async (root) => {
      // What a coordinator's data directory looks like to the sink.
      const db = new Level<string, string>(root);
      await db.sublevel('grant').put('job', '{"token":"7"}');
      await db.close();
      await expect(openLevelStore(root)).rejects.toBeInstanceOf(StartupError);
      await db.open();
      expect(await db.keys().all()).toEqual(['!grant!job']);
      await db.close();
    }),
  );

  it(
    'refuses a data directory path that is a file',
    inTempDir(async (root) => {
      const file = join(root, 'file');
      writeFileSync(file, 'x');
      await expect(openLevelStore(file)).rejects.toBeInstanceOf(StartupError);
    }),
  );
});

describe('LevelDB backend writes', () => {
  // A process kill cannot reveal a missing fsync (the page cache survives
  // it), so the one thing that makes a batch durable is checked directly.
  it(
    'A5: a fence stored before owners existed (fence, then grant_id) reads as bound to no one',
    inTempDir(async (root) => {
      const db = new Level<string, Buffer>(root, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
      try {
        const old = Buffer.concat([Buffer.alloc(8), Buffer.from('grant-7', 'utf8')]);
        old.writeBigUInt64BE(7n, 0);
        await db.sublevel<string, Buffer>('fence', { keyEncoding: 'utf8', valueEncoding: 'buffer' }).put('r', old);
        expect(await (await LevelBackend.open(db)).readFence('r')).toEqual({
          fence: 7n,
          grantId: 'grant-7',
          ownerId: null,
        });
      } finally {
        await db.close();
      }
    }),
  );

  it(
    'F6: every group-commit batch is one LevelDB batch written with sync: true',
    inTempDir(async (root) => {
      const db = new Level<string, Buffer>(root, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
      const calls: { ops: number; sync: unknown }[] = [];
      // The backend writes through classic-level's own batch (abstract-level's implementation API).
      const native = db as unknown as { _batch(ops: unknown[], options: { sync?: boolean }): Promise<void> };
      const batch = native._batch.bind(db);
      native._batch = (ops, options) => {
        calls.push({ ops: ops.length, sync: options?.sync });
        return batch(ops, options);
      };
      try {
        const backend = await LevelBackend.open(db);
        await backend.writeBatch([
          { kind: 'fence', resource: 'r', record: { fence: 2n, grantId: 'g2', ownerId: 'worker-a' } },
          { kind: 'result', resource: 'r', resultId: 'x', result: { token: 2n, payload: new Uint8Array([1, 2]) } },
        ]);
        expect(calls).toEqual([{ ops: 2, sync: true }]);
        expect(await backend.readFence('r')).toEqual({ fence: 2n, grantId: 'g2', ownerId: 'worker-a' });
        expect(await backend.readResult('r', 'x')).toEqual({ token: 2n, payload: Buffer.from([1, 2]) });
      } finally {
        await db.close();
      }
    }),
  );

  it(
    'a batch after the database closed is refused, not handed to LevelDB',
    inTempDir(async (root) => {
      const db = new Level<string, Buffer>(root, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
      const backend = await LevelBackend.open(db);
      await db.close();
      await expect(
        backend.writeBatch([
          { kind: 'result', resource: 'r', resultId: 'x', result: { token: 1n, payload: new Uint8Array() } },
        ]),
      ).rejects.toThrow("the sink's LevelDB is closed");
    }),
  );

  it(
    "a Write's lookups come from memory: a fence once read or stored, a result id the filter knows is new",
    inTempDir(async (root) => {
      const open = () =>
        LevelBackend.open(new Level<string, Buffer>(root, { keyEncoding: 'utf8', valueEncoding: 'buffer' }));
      const first = await open();
      await first.writeBatch([
        { kind: 'fence', resource: 'r', record: { fence: 3n, grantId: 'g3', ownerId: null } },
        { kind: 'result', resource: 'r', resultId: 'old', result: { token: 3n, payload: new Uint8Array([9]) } },
      ]);
      await first.close();

      const backend = await open();
      try {
        // Until the scan of stored keys ends, a result lookup reads; the stored result is found either way.
        const before = backend.resultFilterComplete;
        expect(await backend.readResult('r', 'old')).toEqual({ token: 3n, payload: Buffer.from([9]) });
        await eventually(() => (backend.resultFilterComplete ? true : undefined), { what: 'the key scan to end' });
        expect(await backend.readResult('r', 'old')).toEqual({ token: 3n, payload: Buffer.from([9]) });
        expect(before || backend.diskReads > 0).toBe(true);

        // The common path of a Write: the fence, then a new result id.
        expect(await backend.readFence('r')).toEqual({ fence: 3n, grantId: 'g3', ownerId: null });
        const reads = backend.diskReads;
        for (let i = 0; i < 100; i++) {
          expect(await backend.readFence('r')).toEqual({ fence: 3n, grantId: 'g3', ownerId: null });
          expect(await backend.readResult('r', `new-${i}`)).toBeUndefined();
        }
        expect(backend.diskReads - reads).toBeLessThanOrEqual(3); // a rare false "maybe" reads once

        // What is written is what is answered next, from memory.
        await backend.writeBatch([
          { kind: 'fence', resource: 'r', record: { fence: 4n, grantId: 'g4', ownerId: 'worker-b' } },
          { kind: 'result', resource: 'r', resultId: 'new-0', result: { token: 4n, payload: new Uint8Array([1]) } },
        ]);
        expect(await backend.readFence('r')).toEqual({ fence: 4n, grantId: 'g4', ownerId: 'worker-b' });
        expect(await backend.readResult('r', 'new-0')).toEqual({ token: 4n, payload: Buffer.from([1]) });
        expect(await backend.readFence('never-advanced')).toBeUndefined();
      } finally {
        await backend.close();
      }
    }),
  );
});
