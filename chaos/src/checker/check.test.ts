// checkHistory on hand-written histories: a safe one passes; each invariant
// has a history that breaks exactly it, reported with the operations
// involved; unknown outcomes never accuse; a large history checks fast.
import { describe, expect, it } from 'vitest';
import { checkHistory, type CheckOptions } from './check.js';
import type { FinalState, History, Operation, Outcome } from './history.js';

type Stored = { token: string; payload: string } | null;

/** A history builder: operations get ids in order, times as given. */
function builder() {
  const operations: Operation[] = [];
  const add = (
    process: string,
    method: Operation['method'],
    request: Record<string, unknown>,
    [invokedMs, completedMs]: [number, number],
    outcome: Outcome,
  ) => {
    const op = { id: operations.length + 1, process, method, request, invokedMs, completedMs, outcome };
    operations.push(op);
    return op;
  };
  return {
    operations,
    add,
    acquire: (
      owner: string,
      resource: string,
      token: number,
      at: [number, number],
      requestId = `${owner}-${token}`,
      outcome = lease(resource, owner, token),
    ) => add(owner, 'Acquire', { request_id: requestId, resource, owner_id: owner, incarnation: '1' }, at, outcome),
    renew: (owner: string, resource: string, token: number, at: [number, number]) =>
      add(
        owner,
        'Renew',
        { resource, owner_id: owner, incarnation: '1', token: String(token) },
        at,
        lease(resource, owner, token),
      ),
    write: (
      owner: string,
      resource: string,
      token: number,
      resultId: string,
      payload: string,
      at: [number, number],
      outcome: Outcome = written('APPLIED', token),
    ) => add(owner, 'Write', { resource, token: String(token), result_id: resultId, payload }, at, outcome),
    read: (owner: string, resource: string, resultId: string, payload: string, token: number, at: [number, number]) =>
      add(owner, 'Read', { resource, result_id: resultId }, at, {
        type: 'ok',
        response: { payload, token: String(token) },
      }),
    readMissing: (owner: string, resource: string, resultId: string, at: [number, number]) =>
      add(owner, 'Read', { resource, result_id: resultId }, at, notFound),
  };
}

const lease = (resource: string, owner: string, token: number, replayed = false): Outcome => ({
  type: 'ok',
  response: { lease: { resource, owner_id: owner, incarnation: '1', token: String(token) }, replayed },
});
const written = (outcome: string, fence: number): Outcome => ({
  type: 'ok',
  response: { outcome, fence: String(fence) },
});
const stale: Outcome = { type: 'fail', code: 'FAILED_PRECONDITION', reason: 'STALE_TOKEN' };
const notFound: Outcome = { type: 'fail', code: 'NOT_FOUND', reason: 'RESULT_NOT_FOUND' };
const lost: Outcome = { type: 'unknown', code: 'DEADLINE_EXCEEDED', reason: '' };
const stored = (token: number, payload: string) => ({ token: String(token), payload });
/** A final state of resource r: its fence and results. */
const finalR = (fence: number, results: Record<string, Stored>): FinalState => ({
  fences: { r: String(fence) },
  results: { r: results },
});

/** The takeover story, safe: A writes under 1, B takes over with 2, A's late write is refused. */
function safeStory() {
  const h = builder();
  h.acquire('a', 'r', 1, [0, 10]);
  h.write('a', 'r', 1, 'x', 'a:x', [20, 30]);
  h.acquire('b', 'r', 2, [100, 110]);
  h.write('a', 'r', 1, 'y', 'a:y', [120, 130], stale);
  h.write('b', 'r', 2, 'y', 'b:y', [140, 150]);
  return { h, final: finalR(2, { x: stored(1, 'a:x'), y: stored(2, 'b:y') }) };
}

/** The violations found; each of these histories is small enough to be judged whole. */
const check = (operations: Operation[], final: FinalState, options?: CheckOptions) => {
  const { violations, unchecked } = checkHistory({ operations, final, faults: [] } satisfies History, options);
  expect(unchecked).toEqual([]);
  return violations;
};
const rules = (violations: ReturnType<typeof check>) => violations.map((v) => [v.rule, v.operations]);
type Built = { ops: Operation[]; final: FinalState };

describe('checkHistory', () => {
  it('passes the safe takeover story', () => {
    const { h, final } = safeStory();
    expect(check(h.operations, final)).toEqual([]);
  });

  const cases: [string, () => Built, [string, number[]][]][] = [
    [
      'S1: one token granted to two holders',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.acquire('b', 'r', 1, [20, 30]);
        return { ops: h.operations, final: finalR(1, {}) };
      },
      [['S1', [1, 2]]],
    ],
    [
      "S1: a renewal of another holder's token",
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.renew('b', 'r', 1, [20, 30]);
        return { ops: h.operations, final: finalR(1, {}) };
      },
      [['S1', [1, 2]]],
    ],
    [
      'S2: one request id, two tokens',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10], 'req');
        h.acquire('a', 'r', 2, [20, 30], 'req');
        return { ops: h.operations, final: finalR(2, {}) };
      },
      [['S2', [1, 2]]],
    ],
    [
      "S3: a write below an acknowledged grant's token, sent after it, accepted",
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.acquire('b', 'r', 2, [100, 110]);
        h.write('a', 'r', 1, 'z', 'a:z', [120, 130]);
        return { ops: h.operations, final: finalR(2, { z: stored(1, 'a:z') }) };
      },
      [['S3', [2, 3]]],
    ],
    [
      'S3 and S4: the same late write after the successor had written',
      () => {
        const { h, final } = safeStory();
        h.write('a', 'r', 1, 'z', 'a:z', [160, 170]);
        return { ops: h.operations, final: { ...final, results: { r: { ...final.results.r, z: stored(1, 'a:z') } } } };
      },
      [
        ['S3', [3, 6]],
        ['S4', [5, 6]],
      ],
    ],
    [
      'S3: a late write accepted after the successor renewed a grant whose receipt was lost',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.acquire('b', 'r', 2, [100, 110], 'b-2', lost);
        h.renew('b', 'r', 2, [115, 120]);
        h.write('a', 'r', 1, 'z', 'a:z', [130, 140]);
        return { ops: h.operations, final: finalR(2, { z: stored(1, 'a:z') }) };
      },
      [['S3', [3, 4]]],
    ],
    [
      'S3: stored at the end, sent only after the grant above its token (the answer lost)',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.acquire('b', 'r', 2, [100, 110]);
        h.write('a', 'r', 1, 'z', 'a:z', [120, 130], lost);
        return { ops: h.operations, final: finalR(2, { z: stored(1, 'a:z') }) };
      },
      [['S3', [2, 3]]],
    ],
    [
      'S3: the final fence below an acknowledged grant',
      () => {
        const { h, final } = safeStory();
        return { ops: h.operations, final: { ...final, fences: { r: '1' } } };
      },
      [['S3', [3]]],
    ],
    [
      'S4: a lower token accepted after a higher one, with no grant seen',
      () => {
        const h = builder();
        h.write('b', 'r', 2, 'x', 'b:x', [0, 10]);
        h.write('a', 'r', 1, 'y', 'a:y', [20, 30]);
        return { ops: h.operations, final: finalR(2, { x: stored(2, 'b:x'), y: stored(1, 'a:y') }) };
      },
      [['S4', [1, 2]]],
    ],
    [
      'S4: a result stored under a token no write of it carried',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 30], lost);
        return { ops: h.operations, final: finalR(1, { x: stored(2, 'p') }) };
      },
      [['S4', [2]]],
    ],
    [
      'S4: a result stored that no write sent',
      () => {
        const { h, final } = safeStory();
        return {
          ops: h.operations,
          final: { ...final, results: { r: { ...final.results.r, q: stored(2, 'ghost') } } },
        };
      },
      [['S4', []]],
    ],
    [
      'S5: an acknowledged write missing at the end',
      () => {
        const { h, final } = safeStory();
        return { ops: h.operations, final: { ...final, results: { r: { x: null, y: final.results.r!.y! } } } };
      },
      [['S5', [2]]],
    ],
    [
      'S5: an APPLIED write stored under another token',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 30]);
        h.acquire('b', 'r', 2, [40, 50]);
        h.write('b', 'r', 2, 'x', 'p', [60, 70], lost);
        return { ops: h.operations, final: finalR(2, { x: stored(2, 'p') }) };
      },
      [['S5', [2]]],
    ],
    [
      'S5: a REPLAYED write stored under a token above its own',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 30], written('REPLAYED', 1));
        h.acquire('b', 'r', 2, [40, 50]);
        h.write('b', 'r', 2, 'x', 'p', [60, 70], lost);
        return { ops: h.operations, final: finalR(2, { x: stored(2, 'p') }) };
      },
      [['S5', [2]]],
    ],
    [
      'S5: a read sent after an acknowledged write finds nothing',
      () => {
        const { h, final } = safeStory();
        h.readMissing('c', 'r', 'x', [200, 210]);
        return { ops: h.operations, final };
      },
      [['S5', [2, 6]]],
    ],
    [
      'S5: what a read found is gone at the end',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 30], lost);
        h.read('c', 'r', 'x', 'p', 1, [40, 50]);
        return { ops: h.operations, final: finalR(1, { x: null }) };
      },
      [['S5', [3]]],
    ],
    [
      'S6: one result id acknowledged with two payloads',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'one', [20, 30]);
        h.write('a', 'r', 1, 'x', 'two', [40, 50], written('REPLAYED', 1));
        return { ops: h.operations, final: finalR(1, { x: stored(1, 'one') }) };
      },
      [
        ['S5', [3]],
        ['S6', [2, 3]],
      ],
    ],
    [
      'S6: a read that disagrees with an acknowledged write',
      () => {
        const { h, final } = safeStory();
        h.read('c', 'r', 'x', 'other', 1, [200, 210]);
        return { ops: h.operations, final };
      },
      [['S6', [2, 6]]],
    ],
    [
      'S6: a stored payload that no write sent under its token',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 30], lost);
        return { ops: h.operations, final: finalR(1, { x: stored(1, 'q') }) };
      },
      [['S6', [2]]],
    ],
    [
      'S6: a read that disagrees with the end',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 30], lost);
        h.write('a', 'r', 1, 'x', 'q', [40, 50], lost);
        h.read('c', 'r', 'x', 'p', 1, [60, 70]);
        return { ops: h.operations, final: finalR(1, { x: stored(1, 'q') }) };
      },
      [['S6', [4]]],
    ],
    [
      'protocol: a write accepted under another fence',
      () => {
        const h = builder();
        h.write('a', 'r', 1, 'x', 'a:x', [0, 10], written('APPLIED', 3));
        return { ops: h.operations, final: finalR(3, { x: stored(1, 'a:x') }) };
      },
      [['protocol', [1]]],
    ],
    [
      'protocol: a write that succeeded with no outcome',
      () => {
        const h = builder();
        h.write('a', 'r', 1, 'x', 'a:x', [0, 10], written('OUTCOME_UNSPECIFIED', 1));
        return { ops: h.operations, final: finalR(1, { x: stored(1, 'a:x') }) };
      },
      [['protocol', [1]]],
    ],
    [
      'protocol (P4): a second sink holding a fence for the resource',
      () => {
        const { h, final } = safeStory();
        return { ops: h.operations, final: { ...final, misplaced: ['r has a fence on sink-1 (2) and sink-2 (1)'] } };
      },
      [['protocol', []]],
    ],
    [
      'protocol: a grant of token 0',
      () => {
        const h = builder();
        h.acquire('a', 'r', 0, [0, 10]);
        return { ops: h.operations, final: finalR(0, {}) };
      },
      [['protocol', [1]]],
    ],
    [
      'protocol: a lease for another holder than the one asking',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10], 'a-1', lease('r', 'b', 1));
        return { ops: h.operations, final: finalR(1, {}) };
      },
      [['protocol', [1]]],
    ],
    [
      'LOCK (L6): a fresh token below one granted before',
      () => {
        const h = builder();
        h.acquire('a', 'r', 2, [0, 10]);
        h.acquire('b', 'r', 1, [20, 30]);
        return { ops: h.operations, final: finalR(2, {}) };
      },
      [['LOCK', [1, 2]]],
    ],
  ];

  it.each(cases)('reports %s', (_name, build, expected) => {
    const { ops, final } = build();
    expect(rules(check(ops, final))).toEqual(expected);
  });

  it('says which resource, tokens, holders and operations', () => {
    const { ops, final } = cases.find(([name]) => name.startsWith('S3: a write below'))![1]();
    expect(check(ops, final).map((v) => v.message)).toEqual([
      'r: Write #3 (a) with token 1 was accepted, though the grant of token 2 to b#1 (Acquire #2 (b)) was acknowledged before it was sent',
    ]);
  });

  const safe: [string, () => Built][] = [
    [
      'a lost grant receipt, a lost write receipt, a write sent before the takeover was acknowledged',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        // An Acquire of C's timed out: it may have granted a token, so it orders nothing.
        h.add('c', 'Acquire', { request_id: 'c-1', resource: 'r', owner_id: 'c', incarnation: '1' }, [40, 50], lost);
        h.write('a', 'r', 1, 'x', 'a:x', [20, 30], lost); // may or may not be stored
        h.acquire('b', 'r', 2, [100, 110]);
        // Sent before the grant was acknowledged, accepted after it: concurrent, not a violation.
        h.write('a', 'r', 1, 'y', 'a:y', [105, 115]);
        h.write('b', 'r', 2, 'z', 'b:z', [120, 130]);
        return {
          ops: h.operations,
          final: finalR(2, { x: stored(1, 'a:x'), y: stored(1, 'a:y'), z: stored(2, 'b:z') }),
        };
      },
    ],
    [
      'the same, with the lost write never stored',
      () => {
        const { ops, final } = safe[0]![1]();
        return { ops, final: { ...final, results: { r: { ...final.results.r, x: null } } } };
      },
    ],
    [
      "a successor's replay answered REPLAYED, stored under the original's token (F3)",
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 30]);
        h.acquire('b', 'r', 2, [40, 50]);
        h.write('b', 'r', 2, 'x', 'p', [60, 70], written('REPLAYED', 2));
        return { ops: h.operations, final: finalR(2, { x: stored(1, 'p') }) };
      },
    ],
    [
      'a write whose answer was lost, retried after the takeover and refused',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 30], lost);
        h.acquire('b', 'r', 2, [40, 50]);
        h.write('a', 'r', 1, 'x', 'p', [60, 70], stale);
        return { ops: h.operations, final: finalR(2, { x: stored(1, 'p') }) };
      },
    ],
    [
      'the same retry lost too: the first attempt may be what was stored',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 30], lost);
        h.acquire('b', 'r', 2, [40, 50]);
        h.write('a', 'r', 1, 'x', 'p', [60, 70], lost);
        return { ops: h.operations, final: finalR(2, { x: stored(1, 'p') }) };
      },
    ],
    [
      "a read that found nothing, sent before the write's answer",
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'p', [20, 40]);
        h.readMissing('c', 'r', 'x', [30, 35]);
        return { ops: h.operations, final: finalR(1, { x: stored(1, 'p') }) };
      },
    ],
    [
      'an R1 replay of an older grant after a takeover',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10], 'req-a');
        h.acquire('b', 'r', 2, [20, 30]);
        h.acquire('a', 'r', 1, [40, 50], 'req-a', lease('r', 'a', 1, true));
        return { ops: h.operations, final: finalR(2, {}) };
      },
    ],
    [
      "a write sent within the clock uncertainty of the grant's acknowledgement",
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.acquire('b', 'r', 2, [100, 110]);
        h.write('a', 'r', 1, 'z', 'a:z', [110.5, 120]);
        return { ops: h.operations, final: finalR(2, { z: stored(1, 'a:z') }) };
      },
    ],
    [
      'a resource whose final fence was not read',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        return { ops: h.operations, final: { fences: {}, results: {} } };
      },
    ],
  ];

  it.each(safe)('never accuses on %s', (_name, build) => {
    const { ops, final } = build();
    expect(check(ops, final)).toEqual([]);
  });

  it('trusts real-time order only beyond clockUncertaintyMs', () => {
    const { ops, final } = safe.find(([name]) => name.includes('clock uncertainty'))![1]();
    expect(rules(check(ops, final, { clockUncertaintyMs: 0 }))).toEqual([['S3', [2, 3]]]);
  });

  it('partial: judges a run under way by its calls alone, not by a final state it does not have yet', () => {
    const { h } = safeStory();
    const empty: FinalState = { fences: {}, results: {} };
    expect(check(h.operations, empty, { partial: true })).toEqual([]);
    h.write('a', 'r', 1, 'z', 'a:z', [160, 170]); // accepted below B's acknowledged token
    h.readMissing('c', 'r', 'x', [200, 210]); // after x was acknowledged
    expect(rules(check(h.operations, empty, { partial: true }))).toEqual([
      ['S3', [3, 6]],
      ['S4', [5, 6]],
      ['S5', [2, 7]],
    ]);
  });

  it('finds nothing wrong in a safe history of 20,000 operations (sorted sweeps, not pairwise)', () => {
    const h = builder();
    const results: Record<string, Stored> = {};
    let t = 0;
    for (let token = 1; token <= 2_000; token++) {
      h.acquire(`w${token % 7}`, 'r', token, [t, t + 1]);
      for (let i = 0; i < 9; i++) {
        const id = `${token}-${i}`;
        h.write(`w${token % 7}`, 'r', token, id, id, [t + 2 + i, t + 3 + i]);
        results[id] = stored(token, id);
      }
      t += 20;
    }
    expect(check(h.operations, finalR(2_000, results))).toEqual([]);
  });

  it('checks 5,000 operations on one result id, and reports each bad one once', () => {
    const h = builder();
    h.acquire('a', 'r', 1, [0, 1]);
    h.write('a', 'r', 1, 'x', 'p', [2, 3]);
    for (let i = 0; i < 2_499; i++) {
      h.write('a', 'r', 1, 'x', 'p', [10 + 2 * i, 11 + 2 * i], written('REPLAYED', 1));
      h.read(`c${i % 5}`, 'r', 'x', i === 2_000 ? 'q' : 'p', 1, [10 + 2 * i, 11 + 2 * i]);
    }
    // Speed is the bench's to measure (one pass per result id: about 60 ms here), not a test's to time.
    const found = check(h.operations, finalR(1, { x: stored(1, 'p') }));
    expect(rules(found)).toEqual([['S6', [2, 4004]]]);
  });
});
