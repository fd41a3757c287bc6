import { describe, expect, it } from 'vitest';
import { RequestRecords } from './request-records.js';

const held = (requestId: string, ownerId: string, token = 1n) => ({
  record: { requestId, resource: 'r', ownerId, incarnation: 1n, ttlMs: 1_000, token },
  sinceMs: 0,
});

describe('RequestRecords (R1 records, V4 per-owner count)', () => {
  it('counts each owner’s records as they come and go, and frees an owner with none', () => {
    const records = new RequestRecords();
    records.put(held('a-1', 'worker-a'));
    records.put(held('a-2', 'worker-a'));
    records.put(held('b-1', 'worker-b'));
    expect([records.size, records.countOf('worker-a'), records.countOf('worker-b')]).toEqual([3, 2, 1]);
    records.drop('b-1');
    records.drop('b-1'); // dropping what is gone changes nothing
    expect([records.size, records.countOf('worker-b')]).toEqual([2, 0]);
    expect([...records.entries()].map(([id]) => id)).toEqual(['a-1', 'a-2']);
  });

  it('a record put again under its id replaces the old one and moves the count to its owner', () => {
    const records = new RequestRecords();
    records.put(held('x', 'worker-a', 1n));
    records.put(held('x', 'worker-b', 2n));
    expect([records.size, records.countOf('worker-a'), records.countOf('worker-b')]).toEqual([1, 0, 1]);
    expect(records.get('x')?.record.token).toBe(2n);
  });
});
