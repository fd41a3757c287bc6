// checkHistory on hand-written histories: a safe one passes; each invariant
// has a history that breaks exactly it, reported with the operations
// involved; unknown outcomes never accuse; a large history checks fast.
import { describe, expect, it } from 'vitest';
import { checkHistory } from './check.js';
import type { FinalState, History, Operation, Outcome } from './history.js';

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
  const okLease = (resource: string, owner: string, token: number) => ({
    type: 'ok' as const,
    response: { lease: { resource, owner_id: owner, incarnation: '1', token: String(token) }, replayed: false },
  });
  return {
    operations,
    add,
    acquire: (owner: string, resource: string, token: number, at: [number, number], requestId = `${owner}-${token}`) =>
      add(
        owner,
        'Acquire',
        { request_id: requestId, resource, owner_id: owner, incarnation: '1' },
        at,
        okLease(resource, owner, token),
      ),
    renew: (owner: string, resource: string, token: number, at: [number, number]) =>
      add(
        owner,
        'Renew',
        { resource, owner_id: owner, incarnation: '1', token: String(token) },
        at,
        okLease(resource, owner, token),
      ),
    write: (
      owner: string,
      resource: string,
      token: number,
      resultId: string,
      payload: string,
      at: [number, number],
      outcome?: Outcome,
    ) =>
      add(
        owner,
        'Write',
        { resource, token: String(token), result_id: resultId, payload },
        at,
        outcome ?? { type: 'ok', response: { outcome: 'APPLIED', fence: String(token) } },
      ),
    read: (owner: string, resource: string, resultId: string, payload: string, token: number, at: [number, number]) =>
      add(owner, 'Read', { resource, result_id: resultId }, at, {
        type: 'ok',
        response: { payload, token: String(token) },
      }),
  };
}

const stale: Outcome = { type: 'fail', code: 'FAILED_PRECONDITION', reason: 'STALE_TOKEN' };
const lost: Outcome = { type: 'unknown', code: 'DEADLINE_EXCEEDED', reason: '' };

/** The takeover story, safe: A writes under 1, B takes over with 2, A's late write is refused. */
function safeStory() {
  const h = builder();
  h.acquire('a', 'r', 1, [0, 10]);
  h.write('a', 'r', 1, 'x', 'a:x', [20, 30]);
  h.acquire('b', 'r', 2, [100, 110]);
  h.write('a', 'r', 1, 'y', 'a:y', [120, 130], stale);
  h.write('b', 'r', 2, 'y', 'b:y', [140, 150]);
  const final: FinalState = {
    fences: { r: '2' },
    results: { r: { x: { token: '1', payload: 'a:x' }, y: { token: '2', payload: 'b:y' } } },
  };
  return { h, final };
}

const check = (operations: Operation[], final: FinalState) =>
  checkHistory({ operations, final, faults: [] } satisfies History);
const rules = (violations: ReturnType<typeof checkHistory>) => violations.map((v) => [v.rule, v.operations]);

describe('checkHistory', () => {
  it('passes the safe takeover story', () => {
    const { h, final } = safeStory();
    expect(check(h.operations, final)).toEqual([]);
  });

  const cases: [string, () => { ops: Operation[]; final: FinalState }, [string, number[]][]][] = [
    [
      'S1: one token granted to two holders',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.acquire('b', 'r', 1, [20, 30]);
        return { ops: h.operations, final: { fences: { r: '1' }, results: {} } };
      },
      [['S1', [1, 2]]],
    ],
    [
      'S2: one request id, two tokens',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10], 'req');
        h.acquire('a', 'r', 2, [20, 30], 'req');
        return { ops: h.operations, final: { fences: { r: '2' }, results: {} } };
      },
      [['S2', [1, 2]]],
    ],
    [
      "S3: a write below an acknowledged grant's token, sent after it, accepted",
      () => {
        const { h, final } = safeStory();
        const late = h.write('a', 'r', 1, 'z', 'a:z', [160, 170]);
        return {
          ops: h.operations,
          final: { ...final, results: { r: { ...final.results.r, z: { token: '1', payload: 'a:z' } } } },
          late,
        };
      },
      [
        ['S3', [3, 6]],
        ['S4', [5, 6]],
      ],
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
        return {
          ops: h.operations,
          final: {
            fences: { r: '2' },
            results: { r: { x: { token: '2', payload: 'b:x' }, y: { token: '1', payload: 'a:y' } } },
          },
        };
      },
      [['S4', [1, 2]]],
    ],
    [
      'S5: an acknowledged write missing at the end',
      () => {
        const { h, final } = safeStory();
        return { ops: h.operations, final: { ...final, results: { r: { y: final.results.r!.y! } } } };
      },
      [['S5', [2]]],
    ],
    [
      'S6: one result id acknowledged with two payloads',
      () => {
        const h = builder();
        h.acquire('a', 'r', 1, [0, 10]);
        h.write('a', 'r', 1, 'x', 'one', [20, 30]);
        h.write('a', 'r', 1, 'x', 'two', [40, 50], { type: 'ok', response: { outcome: 'REPLAYED', fence: '1' } });
        return {
          ops: h.operations,
          final: { fences: { r: '1' }, results: { r: { x: { token: '1', payload: 'one' } } } },
        };
      },
      [
        ['S6', [2, 3]],
        ['S5', [3]],
      ],
    ],
    [
      'S6: a stored payload no write sent',
      () => {
        const { h, final } = safeStory();
        return {
          ops: h.operations,
          final: { ...final, results: { r: { ...final.results.r, q: { token: '2', payload: 'ghost' } } } },
        };
      },
      [['S6', []]],
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
      'protocol: a write accepted under another fence',
      () => {
        const h = builder();
        h.write('a', 'r', 1, 'x', 'a:x', [0, 10], { type: 'ok', response: { outcome: 'APPLIED', fence: '3' } });
        return {
          ops: h.operations,
          final: { fences: { r: '3' }, results: { r: { x: { token: '1', payload: 'a:x' } } } },
        };
      },
      [['protocol', [1]]],
    ],
  ];

  it.each(cases)('reports %s', (_name, build, expected) => {
    const { ops, final } = build();
    expect(rules(check(ops, final))).toEqual(expected);
  });

  it('partial: judges a run under way by its calls alone, not by a final state it does not have yet', () => {
    const { h } = safeStory();
    const empty: FinalState = { fences: {}, results: {} };
    expect(checkHistory({ operations: h.operations, final: empty, faults: [] }, { partial: true })).toEqual([]);
    h.write('a', 'r', 1, 'z', 'a:z', [160, 170]); // accepted below B's acknowledged token
    expect(rules(checkHistory({ operations: h.operations, final: empty, faults: [] }, { partial: true }))).toEqual([
      ['S3', [3, 6]],
      ['S4', [5, 6]],
    ]);
  });

  it('never accuses on unknown outcomes: a lost grant receipt, a lost write receipt, a write in flight at takeover', () => {
    const h = builder();
    h.acquire('a', 'r', 1, [0, 10]);
    // An Acquire of C's timed out: it may have granted a token, so it orders nothing.
    h.add('c', 'Acquire', { request_id: 'c-1', resource: 'r', owner_id: 'c', incarnation: '1' }, [40, 50], lost);
    const op = h.write('a', 'r', 1, 'x', 'a:x', [20, 30], lost); // may or may not be stored
    h.acquire('b', 'r', 2, [100, 110]);
    // Sent before the grant was acknowledged, accepted after it: concurrent, not a violation.
    h.write('a', 'r', 1, 'y', 'a:y', [105, 115]);
    h.write('b', 'r', 2, 'z', 'b:z', [120, 130]);
    const final: FinalState = {
      fences: { r: '2' },
      results: {
        r: { x: { token: '1', payload: 'a:x' }, y: { token: '1', payload: 'a:y' }, z: { token: '2', payload: 'b:z' } },
      },
    };
    expect(check(h.operations, final)).toEqual([]);
    // And the lost write may equally be absent.
    expect(
      check(h.operations, { ...final, results: { r: { y: final.results.r!.y!, z: final.results.r!.z! } } }),
    ).toEqual([]);
    expect(op.outcome.type).toBe('unknown');
  });

  it('finds nothing wrong in a safe history of 20,000 operations (sorted sweeps, not pairwise)', () => {
    const h = builder();
    const results: Record<string, { token: string; payload: string }> = {};
    let t = 0;
    for (let token = 1; token <= 2_000; token++) {
      h.acquire(`w${token % 7}`, 'r', token, [t, t + 1]);
      for (let i = 0; i < 9; i++) {
        const id = `${token}-${i}`;
        h.write(`w${token % 7}`, 'r', token, id, id, [t + 2 + i, t + 3 + i]);
        results[id] = { token: String(token), payload: id };
      }
      t += 20;
    }
    expect(check(h.operations, { fences: { r: '2000' }, results: { r: results } })).toEqual([]);
  });
});
