import { describe, expect, it } from 'vitest';
import {
  decideAdvance,
  decideWrite,
  type FenceRecord,
  type StoredResult,
  type WriteDecision,
  type AdvanceDecision,
} from './fence-policy.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const stored = (token: bigint, payload: string): StoredResult => ({ token, payload: bytes(payload) });

describe('decideWrite (F1, A5, F3)', () => {
  const cases: {
    name: string;
    fence: bigint;
    /** The owner the fence is bound to (A5); none by default. */
    owner?: string;
    /** The caller's authenticated identity; auth off (null) by default. */
    writer?: string;
    existing?: StoredResult;
    token: bigint;
    payload: string;
    expected: WriteDecision;
  }[] = [
    {
      name: 'F1: token equal to the fence is applied',
      fence: 5n,
      token: 5n,
      payload: 'a',
      expected: { kind: 'apply' },
    },
    {
      name: 'F1: token below the fence is STALE_TOKEN with the fence',
      fence: 5n,
      token: 4n,
      payload: 'a',
      expected: { kind: 'stale', fence: 5n },
    },
    {
      name: 'F1: token above the fence is TOKEN_NOT_ISSUED with the fence',
      fence: 5n,
      token: 6n,
      payload: 'a',
      expected: { kind: 'not-issued', fence: 5n },
    },
    {
      name: 'F3: same result_id, same payload, valid token is REPLAYED',
      fence: 5n,
      existing: stored(5n, 'a'),
      token: 5n,
      payload: 'a',
      expected: { kind: 'replayed' },
    },
    {
      name: 'F3: a replay stored under an older token is still REPLAYED under the current one',
      fence: 6n,
      existing: stored(5n, 'a'),
      token: 6n,
      payload: 'a',
      expected: { kind: 'replayed' },
    },
    {
      name: 'F3: same result_id, different payload is RESULT_CONFLICT',
      fence: 5n,
      existing: stored(5n, 'a'),
      token: 5n,
      payload: 'b',
      expected: { kind: 'conflict' },
    },
    {
      name: 'F3: a payload that is a prefix of the stored one conflicts',
      fence: 5n,
      existing: stored(5n, 'ab'),
      token: 5n,
      payload: 'a',
      expected: { kind: 'conflict' },
    },
    {
      name: 'F3: empty vs non-empty payload conflicts',
      fence: 5n,
      existing: stored(5n, ''),
      token: 5n,
      payload: 'a',
      expected: { kind: 'conflict' },
    },
    {
      name: 'F3: the token check comes first: a stale replay is STALE_TOKEN',
      fence: 6n,
      existing: stored(5n, 'a'),
      token: 5n,
      payload: 'a',
      expected: { kind: 'stale', fence: 6n },
    },
    {
      name: 'F3: a stale conflicting write is STALE_TOKEN, not RESULT_CONFLICT',
      fence: 6n,
      existing: stored(5n, 'a'),
      token: 5n,
      payload: 'b',
      expected: { kind: 'stale', fence: 6n },
    },
    {
      name: 'F1: an invented token over an existing result is TOKEN_NOT_ISSUED',
      fence: 5n,
      existing: stored(5n, 'a'),
      token: 9n,
      payload: 'a',
      expected: { kind: 'not-issued', fence: 5n },
    },
    {
      name: 'F1: uint64 max is compared as a bigint',
      fence: 2n ** 64n - 1n,
      token: 2n ** 64n - 2n,
      payload: 'a',
      expected: { kind: 'stale', fence: 2n ** 64n - 1n },
    },
    {
      name: 'A5: the owner the fence is bound to writes',
      fence: 5n,
      owner: 'worker-a',
      writer: 'worker-a',
      token: 5n,
      payload: 'a',
      expected: { kind: 'apply' },
    },
    {
      name: "A5: another identity with the owner's token is OWNER_MISMATCH",
      fence: 5n,
      owner: 'worker-a',
      writer: 'worker-b',
      token: 5n,
      payload: 'a',
      expected: { kind: 'owner-mismatch', fence: 5n },
    },
    {
      name: 'A5: the token check comes first: a stale token from another identity is STALE_TOKEN',
      fence: 5n,
      owner: 'worker-a',
      writer: 'worker-b',
      token: 4n,
      payload: 'a',
      expected: { kind: 'stale', fence: 5n },
    },
    {
      name: 'A5: an invented token from another identity is TOKEN_NOT_ISSUED',
      fence: 5n,
      owner: 'worker-a',
      writer: 'worker-b',
      token: 6n,
      payload: 'a',
      expected: { kind: 'not-issued', fence: 5n },
    },
    {
      name: "A5 before F3: another identity replaying the owner's result is OWNER_MISMATCH, not REPLAYED",
      fence: 5n,
      owner: 'worker-a',
      writer: 'worker-b',
      existing: stored(5n, 'a'),
      token: 5n,
      payload: 'a',
      expected: { kind: 'owner-mismatch', fence: 5n },
    },
    {
      name: 'A5 before F3: another identity with a conflicting payload is OWNER_MISMATCH, not RESULT_CONFLICT',
      fence: 5n,
      owner: 'worker-a',
      writer: 'worker-b',
      existing: stored(5n, 'a'),
      token: 5n,
      payload: 'b',
      expected: { kind: 'owner-mismatch', fence: 5n },
    },
    {
      name: "A5: the owner's replay is still REPLAYED",
      fence: 5n,
      owner: 'worker-a',
      writer: 'worker-a',
      existing: stored(5n, 'a'),
      token: 5n,
      payload: 'a',
      expected: { kind: 'replayed' },
    },
    {
      name: 'A5: a fence bound to no one (no owner_id, or stored before A5) admits any identity',
      fence: 5n,
      writer: 'worker-b',
      token: 5n,
      payload: 'a',
      expected: { kind: 'apply' },
    },
    {
      name: 'A5: with auth off (no identity) a bound fence checks no owner',
      fence: 5n,
      owner: 'worker-a',
      token: 5n,
      payload: 'a',
      expected: { kind: 'apply' },
    },
  ];
  it.each(cases)('$name', ({ fence, owner, writer, existing, token, payload, expected }) => {
    const current: FenceRecord = { fence, grantId: `g${fence}`, ownerId: owner ?? null };
    expect(decideWrite(current, existing, { token, payload: bytes(payload), writer: writer ?? null })).toEqual(
      expected,
    );
  });

  it('F1: a never-advanced resource (no fence record) issued no token', () => {
    expect(decideWrite(undefined, undefined, { token: 1n, payload: bytes('a'), writer: 'worker-a' })).toEqual({
      kind: 'not-issued',
      fence: 0n,
    });
  });
});

describe('decideAdvance (F4)', () => {
  const at = (fence: bigint, grantId: string, ownerId: string | null = null): FenceRecord => ({
    fence,
    grantId,
    ownerId,
  });
  const cases: {
    name: string;
    current?: FenceRecord;
    token: bigint;
    grantId: string;
    ownerId?: string;
    expected: AdvanceDecision;
  }[] = [
    {
      name: 'the first advance of a resource moves the fence',
      token: 1n,
      grantId: 'g1',
      expected: { kind: 'advanced' },
    },
    {
      name: 'a higher token moves the fence',
      current: at(3n, 'g3'),
      token: 4n,
      grantId: 'g4',
      expected: { kind: 'advanced' },
    },
    {
      name: 'a jump over burned tokens moves the fence',
      current: at(3n, 'g3'),
      token: 10n,
      grantId: 'g10',
      expected: { kind: 'advanced' },
    },
    {
      name: 'the same token from the same grant_id is an idempotent retry',
      current: at(3n, 'g3'),
      token: 3n,
      grantId: 'g3',
      expected: { kind: 'retry-same-grant' },
    },
    {
      name: 'the same token from another grant_id is FENCE_REGRESSION',
      current: at(3n, 'g3'),
      token: 3n,
      grantId: 'other',
      expected: { kind: 'regression', fence: 3n },
    },
    {
      name: 'a lower token is FENCE_REGRESSION',
      current: at(3n, 'g3'),
      token: 2n,
      grantId: 'g2',
      expected: { kind: 'regression', fence: 3n },
    },
    {
      name: 'a lower token is FENCE_REGRESSION even from the grant that set the fence',
      current: at(3n, 'g3'),
      token: 2n,
      grantId: 'g3',
      expected: { kind: 'regression', fence: 3n },
    },
    {
      name: 'the same grant retried for its owner is an idempotent retry (A5)',
      current: at(3n, 'g3', 'worker-a'),
      token: 3n,
      grantId: 'g3',
      ownerId: 'worker-a',
      expected: { kind: 'retry-same-grant' },
    },
    {
      name: 'the same grant_id for another owner is FENCE_REGRESSION: it cannot rebind the fence (A5)',
      current: at(3n, 'g3', 'worker-a'),
      token: 3n,
      grantId: 'g3',
      ownerId: 'worker-b',
      expected: { kind: 'regression', fence: 3n },
    },
    {
      name: 'the same grant_id without the owner it bound is FENCE_REGRESSION (A5)',
      current: at(3n, 'g3', 'worker-a'),
      token: 3n,
      grantId: 'g3',
      expected: { kind: 'regression', fence: 3n },
    },
  ];
  it.each(cases)('$name', ({ current, token, grantId, ownerId, expected }) => {
    expect(decideAdvance(current, { token, grantId, ownerId: ownerId ?? null })).toEqual(expected);
  });
});
