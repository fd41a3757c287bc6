import { describe, expect, it } from 'vitest';
import { turn } from '@fencer/testkit';
import { KeyedLock } from './keyed-lock.js';

describe('KeyedLock', () => {
  it('never interleaves sections of one key, even across awaits', async () => {
    const lock = new KeyedLock();
    const trace: string[] = [];
    const section = (name: string) =>
      lock.run('k', async () => {
        trace.push(`${name}:in`);
        await turn();
        await turn();
        trace.push(`${name}:out`);
      });
    await Promise.all([section('a'), section('b'), section('c')]);
    expect(trace).toEqual(['a:in', 'a:out', 'b:in', 'b:out', 'c:in', 'c:out']);
  });

  it('runs different keys concurrently', async () => {
    const lock = new KeyedLock();
    let releaseX!: () => void;
    const x = lock.run('x', () => new Promise<void>((resolve) => (releaseX = resolve)));
    // y must finish while x is still held; with one global lock this would hang.
    await lock.run('y', async () => undefined);
    releaseX();
    await x;
  });

  it('releases the key when a section throws, and forgets idle keys', async () => {
    const lock = new KeyedLock();
    await expect(
      lock.run('k', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(lock.run('k', async () => 42)).resolves.toBe(42);
    expect(lock.activeKeys).toBe(0);
  });
});
