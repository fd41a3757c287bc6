import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StartupError } from '@fencer/server-kit';
import { tempDir } from '@fencer/testkit';
import { Level } from 'level';
import { LevelBackend, openLevelStore } from './level-store.js';
import { describeStoreContract } from './store-contract.js';

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

describe('LevelDB store opening', () => {
  it('creates a missing (nested) data directory', async () => {
    const dir = tempDir('fencer-sink-store-');
    try {
      const path = join(dir.path, 'a', 'b', 'sink');
      const { store } = await openLevelStore(path);
      expect(existsSync(path)).toBe(true);
      await store.close();
    } finally {
      dir.remove();
    }
  });

  it('a second open of the same directory fails with a StartupError naming the lock', async () => {
    const dir = tempDir('fencer-sink-store-');
    try {
      const { store } = await openLevelStore(dir.path);
      const second = openLevelStore(dir.path);
      await expect(second).rejects.toBeInstanceOf(StartupError);
      await expect(second).rejects.toThrow(/in use by another process/);
      await store.close();
      // Once the holder closed, the directory opens again.
      const { store: again } = await openLevelStore(dir.path);
      await again.close();
    } finally {
      dir.remove();
    }
  });

  it('refuses a data directory of another on-disk format', async () => {
    const dir = tempDir('fencer-sink-store-');
    try {
      const db = new Level<string, string>(dir.path);
      await db.sublevel('meta').put('format', '99');
      await db.close();
      await expect(openLevelStore(dir.path)).rejects.toBeInstanceOf(StartupError);
    } finally {
      dir.remove();
    }
  });

  it('refuses a data directory path that is a file', async () => {
    const dir = tempDir('fencer-sink-store-');
    try {
      const file = join(dir.path, 'file');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(file, 'x');
      await expect(openLevelStore(file)).rejects.toBeInstanceOf(StartupError);
    } finally {
      dir.remove();
    }
  });
});

describe('LevelDB backend writes', () => {
  // A process kill cannot reveal a missing fsync (the page cache survives
  // it), so the one thing that makes a batch durable is checked directly.
  it('F6: every group-commit batch is one LevelDB batch written with sync: true', async () => {
    const dir = tempDir('fencer-sink-store-');
    const db = new Level<string, Buffer>(dir.path, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    const calls: { ops: number; sync: unknown }[] = [];
    const batch = db.batch.bind(db) as (ops: unknown[], options: { sync?: boolean }) => Promise<void>;
    (db as unknown as { batch: typeof batch }).batch = (ops, options) => {
      calls.push({ ops: ops.length, sync: options?.sync });
      return batch(ops, options);
    };
    try {
      const backend = new LevelBackend(db);
      await backend.writeBatch([
        { kind: 'fence', resource: 'r', record: { fence: 2n, grantId: 'g2' } },
        { kind: 'result', resource: 'r', resultId: 'x', result: { token: 2n, payload: new Uint8Array([1, 2]) } },
      ]);
      expect(calls).toEqual([{ ops: 2, sync: true }]);
      expect(await backend.readFence('r')).toEqual({ fence: 2n, grantId: 'g2' });
      expect(await backend.readResult('r', 'x')).toEqual({ token: 2n, payload: Buffer.from([1, 2]) });
    } finally {
      await db.close();
      dir.remove();
    }
  });
});
