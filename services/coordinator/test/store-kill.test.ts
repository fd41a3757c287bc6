// The LevelDB store's durable writes survive kill -9 of the process that
// made them (L3 step 3, L6): a child writes through the built adapter, says
// so, is SIGKILLed, and a fresh open reads everything back.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '@fencer/testkit';
import { LevelStore } from '../src/adapters/level-store.js';

const dir = tempDir();
afterAll(() => dir.remove());

const BUILT_STORE = fileURLToPath(new URL('../dist/adapters/level-store.js', import.meta.url));

const CHILD = `
const { LevelStore } = await import(process.argv[1]);
const store = await LevelStore.open(process.argv[2]);
for (let i = 1n; i <= 50n; i++) {
  await store.reserveToken('r', i);
  await store.recordGrant(
    { resource: 'r', ownerId: 'w' + i, incarnation: 1n, token: i, ttlMs: 1000, ended: null },
    { requestId: 'q' + i, resource: 'r', ownerId: 'w' + i, incarnation: 1n, ttlMs: 1000, token: i },
  );
}
process.stdout.write('durable\\n');
setInterval(() => {}, 1000);
`;

describe('LevelStore under kill -9', () => {
  it('keeps every synced reservation and grant of a SIGKILLed writer', async () => {
    const data = join(dir.path, 'data');
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, BUILT_STORE, data], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => line === 'durable' && resolve());
      void exited.then(() => reject(new Error('writer exited early')));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const store = await LevelStore.open(data);
    try {
      const state = await store.load();
      expect(state.counters.get('r')).toBeGreaterThanOrEqual(50n); // one block covers all 50 (level-store.ts)
      expect(state.grants).toEqual([
        { resource: 'r', ownerId: 'w50', incarnation: 1n, token: 50n, ttlMs: 1000, ended: null },
      ]);
      expect(state.requests).toHaveLength(50);
    } finally {
      await store.close();
    }
  });
});
