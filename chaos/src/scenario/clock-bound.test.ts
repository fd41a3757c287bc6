import { describe, expect, it } from 'vitest';
import { clockUncertaintyMs, offsetRange } from './clock-bound.js';

describe('offsetRange', () => {
  it.each([
    {
      name: 'one round trip: the reading lies between asking and the answer',
      samples: [{ askedMs: 100, readMs: 100.4, answeredMs: 101 }],
      range: { minMs: -0.6, maxMs: 0.4 },
    },
    {
      name: 'several: what all of them allow',
      samples: [
        { askedMs: 100, readMs: 105, answeredMs: 102 }, // offset in [3, 5]
        { askedMs: 200, readMs: 204, answeredMs: 200.5 }, // offset in [3.5, 4]
      ],
      range: { minMs: 3.5, maxMs: 4 },
    },
    {
      name: 'samples that contradict each other (the offset moved): what any allows',
      samples: [
        { askedMs: 100, readMs: 100.5, answeredMs: 101 }, // [-0.5, 0.5]
        { askedMs: 200, readMs: 210.5, answeredMs: 201 }, // [9.5, 10.5]
      ],
      range: { minMs: -0.5, maxMs: 10.5 },
    },
  ])('$name', ({ samples, range }) => {
    const found = offsetRange(samples);
    expect(found.minMs).toBeCloseTo(range.minMs, 9);
    expect(found.maxMs).toBeCloseTo(range.maxMs, 9);
  });

  it('refuses no samples', () => {
    expect(() => offsetRange([])).toThrow(RangeError);
  });
});

describe('clockUncertaintyMs', () => {
  it.each([
    { name: 'nothing measured: the floor', offsets: [], floorMs: 1, bound: 1 },
    { name: 'tight offsets: the floor', offsets: [{ minMs: -0.1, maxMs: 0.2 }], floorMs: 1, bound: 1 },
    {
      name: 'two processes on either side of the supervisor: the spread of both',
      offsets: [
        { minMs: -2, maxMs: -1 },
        { minMs: 1, maxMs: 3 },
      ],
      floorMs: 1,
      bound: 5,
    },
    {
      name: 'all ahead of the supervisor: the supervisor itself counts (offset 0)',
      offsets: [{ minMs: 2, maxMs: 4 }],
      floorMs: 1,
      bound: 4,
    },
  ])('$name', ({ offsets, floorMs, bound }) => {
    expect(clockUncertaintyMs(offsets, floorMs)).toBe(bound);
  });
});
