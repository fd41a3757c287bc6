// The arithmetic of a measurement: latencies kept to the microsecond, and
// CPU where a server that takes only some of a case's operations (one sink
// of several) is charged per operation it took.
import { describe, expect, it } from 'vitest';
import { cpuPerOperation, LatencyHistogram } from './measure.js';

describe('LatencyHistogram', () => {
  it('gives percentiles in milliseconds, to the microsecond, a latency under one counting as one', () => {
    const histogram = new LatencyHistogram();
    for (const ms of [0.0001, 0.25, 0.5, 0.75, 1.5]) histogram.record(ms);
    expect(histogram.percentileMs(0)).toBe(0.001);
    expect(histogram.percentileMs(50)).toBe(0.5);
    expect(histogram.percentileMs(100)).toBeCloseTo(1.5, 2);
  });
});

describe('cpuPerOperation', () => {
  const before = {
    cpuUs: { bench: 1_000, coordinator: 500, sink1: 2_000, sink2: 3_000 },
    served: { sink1: 10, sink2: 40 },
  };
  const after = {
    cpuUs: { bench: 2_000, coordinator: 600, sink1: 6_000, sink2: 9_000 },
    served: { sink1: 60, sink2: 90 },
  };

  it('charges a counting server per operation it took, every other process per operation of the case', () => {
    // 100 writes in all, 50 to each sink.
    expect(cpuPerOperation(before, after, 100)).toEqual({ bench: 10, coordinator: 1, sink1: 80, sink2: 120 });
  });

  it('is 0 for a process that took no operation', () => {
    const idle = { cpuUs: after.cpuUs, served: { sink1: 60, sink2: 40 } };
    expect(cpuPerOperation(before, idle, 50)).toMatchObject({ sink1: 80, sink2: 0 });
    expect(cpuPerOperation(before, after, 0)).toMatchObject({ bench: 0, coordinator: 0 });
  });
});
