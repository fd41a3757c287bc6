import { describe, expect, it } from 'vitest';
import { sliceSizes } from './slicer.js';

describe('sliceSizes', () => {
  it.each([
    [60, 10, 2],
    [65_536, 100, 30],
    [5, 10, 0],
    [1_000, 1, 0],
    [100, 3, 50],
  ])(
    'splits %i bytes (average %i, variation %i) into pieces that add up and stay small',
    (length, average, variation) => {
      const sizes = sliceSizes(length, average, variation);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(length);
      for (const size of sizes) {
        expect(size).toBeGreaterThanOrEqual(1);
        expect(size).toBeLessThanOrEqual(Math.max(1, average + variation));
      }
      if (length > average + variation) expect(sizes.length).toBeGreaterThan(1);
    },
  );
});
