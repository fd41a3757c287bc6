import { describe, expect, it } from 'vitest';
import { FakeClock, UINT64_MAX } from '@fencer/common';
import { LeaseTable } from './lease-table.js';
import type { Grant, RequestRecord } from './model.js';

const TTL = 1_000;
const grant: Grant = { resource: 'r', ownerId: 'alice', incarnation: 1n, token: 3n, ttlMs: TTL, ended: null };
const record: RequestRecord = {
  requestId: 'q',
  resource: 'r',
  ownerId: 'alice',
  incarnation: 1n,
  ttlMs: TTL,
  token: 3n,
};
const me = { resource: 'r', ownerId: 'alice', incarnation: 1n, token: 3n };

function tableWithGrant() {
  const clock = new FakeClock(0);
  const table = new LeaseTable(clock, 60_000, { maxIdleResources: Number.MAX_SAFE_INTEGER, fenceOnExpiry: false });
  table.noteReserved('r', 3n);
  table.applyGrant(grant, record);
  return { clock, table };
}

describe('LeaseTable decisions (L1, L2, L4, L5, L6, T1)', () => {
  it.each([
    [0, 'held', 1_000],
    [999, 'held', 1],
    [999.5, 'held', 1],
    [1_000, 'free', null],
    [5_000, 'free', null],
  ] as const)('L1/L2: at %d ms the resource is %s', (elapsedMs, kind, remainingMs) => {
    const { clock, table } = tableWithGrant();
    clock.advance(elapsedMs);
    const availability = table.availability('r');
    expect(availability.kind).toBe(kind);
    if (availability.kind === 'held') expect(availability.remainingMs).toBe(remainingMs);
  });

  it.each([
    ['the holder, before expiry', {}, 999, 'renew'],
    ['the holder, at expiry', {}, 1_000, 'expired'],
    ['another owner, before expiry', { ownerId: 'bob' }, 0, 'not-holder'],
    ['another incarnation, after expiry', { incarnation: 2n }, 2_000, 'not-holder'],
    ['an older token', { token: 2n }, 0, 'not-holder'],
    ['a token never granted', { token: 4n }, 0, 'not-holder'],
  ] as const)('L4: renew by %s → %s', (_who, change, elapsedMs, kind) => {
    const { clock, table } = tableWithGrant();
    clock.advance(elapsedMs);
    expect(table.decideRenew({ ...me, ttlMs: 0, ...change }).kind).toBe(kind);
  });

  it.each([
    ['the holder, valid', {}, 0, 'release'],
    ['the holder, expired', {}, 5_000, 'release'],
    ['another owner', { ownerId: 'bob' }, 0, 'not-holder'],
    ['another token', { token: 2n }, 0, 'not-holder'],
  ] as const)('L5: release by %s → %s', (_who, change, elapsedMs, kind) => {
    const { clock, table } = tableWithGrant();
    clock.advance(elapsedMs);
    expect(table.decideRelease({ ...me, ...change }).kind).toBe(kind);
  });

  it('L6: the next token is above the counter, the latest grant and any sink fence learned', () => {
    const { table } = tableWithGrant();
    expect(table.nextToken('r')).toBe(4n);
    table.noteReserved('r', 9n);
    expect(table.nextToken('r')).toBe(10n);
    table.noteSinkFence('r', 20n);
    expect(table.nextToken('r')).toBe(21n);
    expect(table.nextToken('untouched')).toBe(1n);
  });

  it.each([
    ['a counter one below the maximum', UINT64_MAX, 'noteReserved', UINT64_MAX - 1n],
    ['a counter at the maximum', undefined, 'noteReserved', UINT64_MAX],
    ['a sink fence at the maximum', undefined, 'noteSinkFence', UINT64_MAX],
    ['a sink fence past the maximum (never from a real sink)', undefined, 'noteSinkFence', UINT64_MAX + 5n],
  ] as const)('T1: with %s the next token is %s', (_, next, note, value) => {
    const { table } = tableWithGrant();
    table[note]('r', value);
    expect(table.nextToken('r')).toBe(next);
  });

  it('refuses to apply a grant whose token was never reserved or is not above the latest (a bug, not an outcome)', () => {
    const { table } = tableWithGrant();
    expect(() => table.applyGrant({ ...grant, token: 9n }, { ...record, requestId: 'q2', token: 9n })).toThrow(
      /unreserved/,
    );
    table.noteReserved('r', 9n);
    expect(() => table.applyGrant({ ...grant, token: 2n }, { ...record, requestId: 'q3', token: 2n })).toThrow(
      /not above/,
    );
  });
});
