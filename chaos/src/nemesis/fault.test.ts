// defineNemesis on a fault that only counts: one record per episode on the
// monotonic clock, heal idempotent, a failed heal retried, a heal that
// arrives while start is injecting heals what it injected.
import { describe, expect, it } from 'vitest';
import { gate } from '@fencer/testkit';
import { defineNemesis } from './fault.js';

/** A nemesis whose fault is a counter of active injections; `failUndo` makes the next undo throw once. */
function counting(options: { injecting?: Promise<void> } = {}) {
  const state = { active: 0, undos: 0, failUndo: false };
  const nemesis = defineNemesis('pause', { process: 'test' }, async () => {
    await options.injecting;
    state.active += 1;
    return {
      detail: 'counted',
      undo: async () => {
        if (state.failUndo) {
          state.failUndo = false;
          throw new Error('undo failed');
        }
        state.active -= 1;
        state.undos += 1;
        return `undo ${state.undos}`;
      },
    };
  });
  return { state, nemesis };
}

describe('defineNemesis', () => {
  it('records one episode from before the start to after the heal; healing again changes nothing', async () => {
    const { state, nemesis } = counting();
    expect(await nemesis.heal()).toBeUndefined(); // never started: nothing to heal
    const beforeMs = performance.now();
    await nemesis.start();
    expect(state.active).toBe(1);
    const record = await nemesis.heal();
    const afterMs = performance.now();
    expect(record).toEqual({
      name: 'pause',
      process: 'test',
      startMs: expect.any(Number),
      endMs: expect.any(Number),
      detail: 'counted; undo 1',
    });
    expect(beforeMs).toBeLessThanOrEqual(record!.startMs);
    expect(record!.startMs).toBeLessThanOrEqual(record!.endMs);
    expect(record!.endMs).toBeLessThanOrEqual(afterMs);
    expect(await nemesis.heal()).toBe(record);
    expect(state).toMatchObject({ active: 0, undos: 1 });
  });

  it('refuses a second start while active, and starts a new episode after a heal', async () => {
    const { state, nemesis } = counting();
    await nemesis.start();
    await expect(nemesis.start()).rejects.toThrow('pause on process test is already active');
    const first = await nemesis.heal();
    await nemesis.start();
    const second = await nemesis.heal();
    expect(second!.startMs).toBeGreaterThanOrEqual(first!.endMs);
    expect(second!.detail).toBe('counted; undo 2');
    expect(state.active).toBe(0);
  });

  it('stays active when a heal fails, so the heal can be tried again', async () => {
    const { state, nemesis } = counting();
    await nemesis.start();
    state.failUndo = true;
    await expect(nemesis.heal()).rejects.toThrow('undo failed');
    expect(state.active).toBe(1);
    expect((await nemesis.heal())?.detail).toBe('counted; undo 1');
    expect(state.active).toBe(0);
  });

  it('a heal called while start is still injecting waits for it and heals it', async () => {
    const injecting = gate();
    const { state, nemesis } = counting({ injecting: injecting.opened });
    const starting = nemesis.start();
    const healing = nemesis.heal();
    injecting.open();
    await starting;
    expect((await healing)?.detail).toBe('counted; undo 1');
    expect(state.active).toBe(0);
  });
});
