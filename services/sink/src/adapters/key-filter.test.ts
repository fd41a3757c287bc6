import { describe, expect, it } from 'vitest';
import { KeyFilter } from './key-filter.js';

describe('KeyFilter', () => {
  it('never says "not stored" of a key it was given, ids of any script included', () => {
    const filter = new KeyFilter(64 * 1024);
    const keys = Array.from({ length: 20_000 }, (_, i) => `resource-${i % 7}\u0000result-${i}-\u{1F600}-é`);
    for (const key of keys) filter.add(key);
    expect(keys.every((key) => filter.mayContain(key))).toBe(true);
  });

  it('says "not stored" of nearly every other key at 10 bits per key', () => {
    const filter = new KeyFilter(12_500); // 100,000 bits for 10,000 keys
    for (let i = 0; i < 10_000; i++) filter.add(`r\u0000stored-${i}`);
    let maybe = 0;
    for (let i = 0; i < 100_000; i++) if (filter.mayContain(`r\u0000new-${i}`)) maybe++;
    // ~1 % in theory for 7 probes; a weak hash would show far more.
    expect(maybe / 100_000).toBeLessThan(0.02);
  });
});
