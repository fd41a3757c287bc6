// opportunities() on hand-written histories: each row is a small story and
// the operations it counts as chances to break each invariant.
import { describe, expect, it } from 'vitest';
import { checkHistory } from './check.js';
import type { Operation, Outcome } from './history.js';
import { opportunities, type Opportunities } from './opportunities.js';

const lease = (resource: string, owner: string, token: number): Outcome => ({
  type: 'ok',
  response: { lease: { resource, owner_id: owner, incarnation: '1', token: String(token) }, replayed: false },
});
const written = (outcome: 'APPLIED' | 'REPLAYED', fence: number): Outcome => ({
  type: 'ok',
  response: { outcome, fence: String(fence) },
});
const refused = (reason: string): Outcome => ({ type: 'fail', code: 'FAILED_PRECONDITION', reason });
const lost: Outcome = { type: 'unknown', code: 'DEADLINE_EXCEEDED', reason: '' };

type At = [invokedMs: number, completedMs: number];
const call = (
  method: Operation['method'],
  request: Record<string, unknown>,
  [invokedMs, completedMs]: At,
  outcome: Outcome,
) => ({ process: 'worker', method, request, invokedMs, completedMs, outcome });
const acquire = (
  owner: string,
  token: number,
  at: At,
  requestId = `${owner}-${token}`,
  outcome = lease('r', owner, token),
) => call('Acquire', { request_id: requestId, resource: 'r', owner_id: owner, incarnation: '1' }, at, outcome);
const renew = (owner: string, token: number, at: At) =>
  call(
    'Renew',
    { resource: 'r', owner_id: owner, incarnation: '1', token: String(token) },
    at,
    lease('r', owner, token),
  );
const write = (
  token: number,
  resultId: string,
  payload: string,
  at: At,
  outcome: Outcome = written('APPLIED', token),
) => call('Write', { resource: 'r', token: String(token), result_id: resultId, payload }, at, outcome);
const numbered = (calls: Omit<Operation, 'id'>[]): Operation[] => calls.map((c, i) => ({ id: i + 1, ...c }));

const none: Opportunities = { S1: 0, S2: 0, S3: 0, S4: 0, S5: 0, S6: 0 };

describe('opportunities', () => {
  it.each<[string, Omit<Operation, 'id'>[], Partial<Opportunities>]>([
    ['an empty history', [], {}],
    [
      // The takeover story: only A's late write could have been a stale one accepted.
      'a takeover, then the old holder writes',
      [
        acquire('a', 1, [0, 10]),
        write(1, 'a-1', 'x', [20, 30]),
        acquire('b', 2, [40, 50]),
        write(1, 'a-2', 'y', [60, 70], refused('STALE_TOKEN')),
      ],
      { S1: 2, S3: 1, S5: 1 },
    ],
    [
      'a write whose fate is unknown may never have reached the sink',
      [acquire('a', 1, [0, 10]), acquire('b', 2, [40, 50]), write(1, 'a-2', 'y', [60, 70], lost)],
      { S1: 2 },
    ],
    [
      // Renewals are grants too; and what was sent within the clock margin is not known to follow it.
      'a renewal acknowledged, then writes sent 0.5 ms and 2 ms later',
      [
        acquire('a', 1, [0, 10]),
        renew('b', 2, [40, 50]),
        write(1, 'early', 'x', [50.5, 60], refused('STALE_TOKEN')),
        write(1, 'late', 'x', [52, 60], refused('STALE_TOKEN')),
      ],
      { S1: 1, S3: 1 },
    ],
    [
      'an acquisition retried under its request id, and a refused one',
      [
        acquire('a', 1, [0, 10], 'req-1'),
        acquire('a', 1, [20, 30], 'req-1'),
        acquire('b', 0, [40, 50], 'req-2', refused('LEASE_HELD')),
      ],
      { S1: 2, S2: 1 },
    ],
    [
      // S4: B's token-2 write was accepted; A's token-1 write, sent after, must not be.
      'a write below one already accepted',
      [write(2, 'b-1', 'x', [0, 10]), write(1, 'a-1', 'y', [20, 30], refused('STALE_TOKEN'))],
      { S4: 1, S5: 1 },
    ],
    [
      // A contended result id: B's write under another token and payload, then retried with A's payload.
      'a result id written by successive holders',
      [
        write(1, 'c0-1', 'from-a', [0, 10]),
        write(2, 'c0-1', 'from-b', [20, 30], refused('RESULT_CONFLICT')),
        write(2, 'c0-1', 'from-a', [40, 50], written('REPLAYED', 2)),
        write(2, 'c0-1', 'from-a', [60, 70], lost),
      ],
      { S4: 2, S5: 2, S6: 2 },
    ],
    [
      'the same write retried under one token, and writes overlapping in time',
      [
        write(1, 'a-1', 'x', [0, 10]),
        write(1, 'a-1', 'x', [20, 30], written('REPLAYED', 1)),
        write(1, 'o-1', 'p', [40, 50]),
        write(2, 'o-1', 'q', [40.5, 50], refused('TOKEN_NOT_ISSUED')),
      ],
      { S5: 3 },
    ],
  ])('%s', (_, calls, expected) => {
    expect(opportunities(numbered(calls))).toEqual({ ...none, ...expected });
  });

  it('counts every write the checker convicts of accepting a stale token', () => {
    const operations = numbered([
      acquire('a', 1, [0, 10]),
      acquire('b', 2, [40, 50]),
      write(2, 'b-1', 'new', [60, 70]),
      // A sink that accepts every stale write (F1 broken).
      write(1, 'a-1', 'old', [80, 90], written('APPLIED', 2)),
    ]);
    const final = {
      fences: { r: '2' },
      results: { r: { 'b-1': { token: '2', payload: 'new' }, 'a-1': { token: '1', payload: 'old' } } },
    };
    const rules = new Set(checkHistory({ operations, final, faults: [] }).violations.map((v) => v.rule));
    expect(rules).toContain('S3');
    expect(rules).toContain('S4');
    expect(opportunities(operations)).toMatchObject({ S3: 1, S4: 1 });
  });
});
