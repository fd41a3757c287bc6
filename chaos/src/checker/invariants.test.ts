// S3–S6 as both checkers judge them: what a stale write, a broken order, a
// lost acknowledged write and a second payload are.
import { describe, expect, it } from 'vitest';
import { breaksOrder, distinctPayloads, lostWrite, staleUnder } from './invariants.js';

describe('staleUnder and breaksOrder', () => {
  it.each([
    [4n, 5n, true],
    [5n, 5n, false],
    [6n, 5n, false],
  ])('token %s against %s: %s', (token, other, below) => {
    expect([staleUnder(token, other), breaksOrder(token, other)]).toEqual([below, below]);
  });
});

describe('lostWrite', () => {
  const applied = { token: 5n, payload: 'p', replayed: false };
  const replayed = { ...applied, replayed: true };
  it.each([
    ['APPLIED, held', applied, { token: '5', payload: 'p' }, undefined],
    ['APPLIED, nothing stored', applied, null, 'nothing'],
    ['APPLIED, never read', applied, undefined, 'nothing'],
    ['APPLIED, another payload', applied, { token: '5', payload: 'q' }, 'payload'],
    ['APPLIED, a lower token', applied, { token: '4', payload: 'p' }, 'token'],
    ['APPLIED, a higher token', applied, { token: '6', payload: 'p' }, 'token'],
    ['REPLAYED, the original lower token (F3)', replayed, { token: '4', payload: 'p' }, undefined],
    ['REPLAYED, a higher token', replayed, { token: '6', payload: 'p' }, 'token'],
  ])('%s', (_, write, stored, lost) => {
    expect(lostWrite(write, stored)).toBe(lost);
  });
});

describe('distinctPayloads', () => {
  it('keeps the first of each payload, in order', () => {
    const seen = [
      { id: 1, payload: 'a' },
      { id: 2, payload: 'b' },
      { id: 3, payload: 'a' },
    ];
    expect(distinctPayloads(seen).map((s) => s.id)).toEqual([1, 2]);
  });
});
