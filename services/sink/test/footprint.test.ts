// Memory stays flat as results accumulate: once a write is durable, nothing
// in the process holds it (no overlay entry, no lock entry, no batch, no
// cache of results); results live on disk only.
//
// Teeth: each payload handed to the engine is watched through a WeakRef.
// After a forced full GC, any payload still reachable means some structure
// kept per-write state: an overlay that is never cleared, a finished batch
// still referenced, or results kept in a JS map. Structural counters alone
// would miss the last of these, the WeakRefs miss none of them.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { tempDir } from '@fencer/testkit';
import { openLevelStore } from '../src/adapters/level-store.js';
import { SinkEngine } from '../src/core/sink-engine.js';

// A full, synchronous collection, so "unreachable" is observable; the flag
// only exposes `gc` to contexts created after it is set.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
/** WeakRef targets stay alive until the current job ends; let it end. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('memory after many durable results', () => {
  it('20k writes leave no pending overlay, no locked resource and no payload reachable', async () => {
    const dir = tempDir('fencer-sink-footprint-');
    const { store } = await openLevelStore(dir.path);
    const engine = new SinkEngine(store);
    try {
      const resources = 16;
      const waves = 20;
      const perWave = 1000;
      for (let r = 0; r < resources; r++)
        await engine.advanceFence({ resource: `job-${r}`, token: 1n, grantId: `g-${r}`, ownerId: null });
      const watched: WeakRef<Uint8Array>[] = [];
      for (let wave = 0; wave < waves; wave++) {
        const outcomes = await Promise.all(
          Array.from({ length: perWave }, (_, i) => {
            const payload = new Uint8Array(64).fill(i % 251);
            watched.push(new WeakRef(payload));
            return engine.write({
              resource: `job-${i % resources}`,
              token: 1n,
              resultId: `step-${wave}-${i}`,
              payload,
              writer: null,
            });
          }),
        );
        expect(outcomes.every((o) => o.kind === 'applied')).toBe(true);
      }

      expect(store.stats).toMatchObject({
        commits: resources + waves * perWave,
        durableOps: resources + waves * perWave,
        pending: 0,
      });
      expect(engine.busyResources).toBe(0);

      await nextTurn();
      collectGarbage();
      await nextTurn();
      collectGarbage();
      expect(watched.filter((ref) => ref.deref() !== undefined).length).toBe(0);

      // The results are still there: on disk, where they belong.
      expect(await engine.read('job-3', 'step-7-3')).toEqual({
        kind: 'found',
        token: 1n,
        payload: Buffer.alloc(64, 3),
      });
    } finally {
      await store.close();
      dir.remove();
    }
  });
});
