// The report of a hand-written history: lanes, leases derived from
// Acquire/Renew/Release, write marks by outcome, faults, escaping and the
// violations' highlighting, read back from the HTML by class and data
// attribute (what the browser test and a reader rely on).
import { describe, expect, it } from 'vitest';
import type { History, Operation, Outcome } from '../checker/history.js';
import type { Violation } from '../checker/round.js';
import { DETAIL_LIMIT, renderReport } from './html.js';

const ok = (response: Record<string, unknown>): Outcome => ({ type: 'ok', response });
const fail = (code: string, reason: string): Outcome => ({ type: 'fail', code, reason });
const lease = (resource: string, owner: string, token: string) => ({
  lease: { resource, owner_id: owner, incarnation: '1', token, ttl_ms: '1000', remaining_ms: '1000' },
});
let nextId = 1;
const op = (
  process: string,
  method: Operation['method'],
  request: Record<string, unknown>,
  [invokedMs, completedMs]: [number, number],
  outcome: Outcome,
): Operation => ({ id: nextId++, process, method, request, invokedMs, completedMs, outcome });
const holder = (owner: string) => ({ owner_id: owner, incarnation: '1' });
const write = (resource: string, token: string, resultId: string) => ({
  resource,
  token,
  result_id: resultId,
  payload: `<b>${resultId}</b>`,
});
const XSS = '<script>alert(1)</script>';

// worker-a holds job-1 with token 1, pauses past its TTL, worker-b takes
// over with token 2 and a's late write is refused; worker-c loses job-2.
const operations = [
  op(
    'worker-a',
    'Acquire',
    { resource: 'job-1', ...holder('worker-a'), ttl_ms: 1000 },
    [1000, 1010],
    ok(lease('job-1', 'worker-a', '1')),
  ), // #1
  op('worker-a', 'Write', write('job-1', '1', 'r1'), [1020, 1030], ok({ outcome: 'APPLIED', fence: '1' })), // #2
  op('worker-a', 'Write', write('job-1', '1', 'r1'), [1040, 1050], ok({ outcome: 'REPLAYED', fence: '1' })), // #3
  op(
    'worker-a',
    'Renew',
    { resource: 'job-1', ...holder('worker-a'), token: '1', ttl_ms: 0 },
    [1100, 1110],
    ok(lease('job-1', 'worker-a', '1')),
  ), // #4
  op(
    'worker-b',
    'Acquire',
    { resource: 'job-1', ...holder('worker-b'), ttl_ms: 1000 },
    [1200, 1205],
    fail('ABORTED', 'LEASE_HELD'),
  ), // #5
  op(
    'worker-b',
    'Acquire',
    { resource: 'job-1', ...holder('worker-b'), ttl_ms: 1000 },
    [2200, 2210],
    ok(lease('job-1', 'worker-b', '2')),
  ), // #6
  op('worker-a', 'Write', write('job-1', '1', XSS), [2300, 2310], fail('FAILED_PRECONDITION', 'STALE_TOKEN')), // #7
  op('worker-b', 'Write', write('job-1', '2', 'r2'), [2400, 2900], {
    type: 'unknown',
    code: 'DEADLINE_EXCEEDED',
    reason: '',
  }), // #8
  op('worker-b', 'Write', write('job-1', '2', 'r1'), [2950, 2960], fail('ALREADY_EXISTS', 'RESULT_CONFLICT')), // #9
  op(
    'worker-b',
    'Release',
    { resource: 'job-1', ...holder('worker-b'), token: '2' },
    [3000, 3010],
    ok({ released: true }),
  ), // #10
  op(
    'worker-c',
    'Acquire',
    { resource: 'job-2', ...holder('worker-c'), ttl_ms: 1000 },
    [1500, 1510],
    ok(lease('job-2', 'worker-c', '1')),
  ), // #11
  op('worker-c', 'Write', write('job-2', '1', 's1'), [1600, 1610], ok({ outcome: 'APPLIED', fence: '1' })), // #12
  op(
    'worker-c',
    'Renew',
    { resource: 'job-2', ...holder('worker-c'), token: '1', ttl_ms: 0 },
    [2600, 2610],
    fail('FAILED_PRECONDITION', 'LEASE_EXPIRED'),
  ), // #13
  // A retry of #11's Acquire (R1): the same lease, not a new one.
  op(
    'worker-c',
    'Acquire',
    { resource: 'job-2', ...holder('worker-c'), ttl_ms: 1000 },
    [1505, 1520],
    ok({ ...lease('job-2', 'worker-c', '1'), replayed: true }),
  ), // #14
];
const history: History = {
  operations,
  final: { fences: { 'job-1': '2', 'job-2': '1' }, results: {} },
  faults: [
    { name: 'pause', target: 'worker-a', startMs: 1150, endMs: 2250 },
    { name: 'latency', target: 'workers_to_sink', startMs: 2400 },
  ],
};
const violations: Violation[] = [
  { rule: 'S3', message: 'job-1: write #7 <img src=x onerror=alert(1)> after grant #6', operations: [6, 7] },
  { rule: 'S1', message: 'token 2 granted twice', operations: [5] },
];
const html = renderReport({
  history,
  violations,
  title: 'chaos & <friends>',
  seed: 42,
  clockUncertaintyMs: 1.25,
  meta: { seconds: '3' },
});

/** Every opening tag whose class list starts with `cls`, as its attributes. */
function tags(cls: string): Record<string, string>[] {
  const found = [...html.matchAll(new RegExp(`<g class="${cls}(?: [^"]*)?"[^>]*>`, 'g'))];
  return found.map(([tag]) => Object.fromEntries([...tag.matchAll(/([\w-]+)="([^"]*)"/g)].map(([, k, v]) => [k!, v!])));
}
/** The markup of the element with data-op="id" (up to its closing </g>). */
const element = (id: number) => html.match(new RegExp(`<g [^>]*data-op="${id}".*?</g>`))?.[0] ?? '';

describe('renderReport', () => {
  it('draws a lane per resource', () => {
    expect(tags('lane').map((t) => t['data-lane'])).toEqual(['job-1', 'job-2']);
  });

  it('draws a lease per grant (a replayed one continues it), labelled with its token, ended by takeover, Release or a lost Renew', () => {
    expect(tags('lease').map((t) => [t['data-op'], t['data-owner'], t['data-token'], t['data-end']])).toEqual([
      ['1', 'worker-a', '1', 'superseded'],
      ['6', 'worker-b', '2', 'released'],
      ['11', 'worker-c', '1', 'lost'],
    ]);
    expect(element(6)).toMatch(/<text[^>]*>token 2<\/text>/);
    // a's lease ran out at 1110 + 1000 ms; b's grant at 2210 fenced it: the tail between is drawn expired.
    expect(element(1)).toContain('class="expired"');
    expect(element(6)).not.toContain('class="expired"');
  });

  it.each([
    [2, 'applied', undefined],
    [3, 'replayed', undefined],
    [7, 'refused', 'STALE_TOKEN'],
    [8, 'unknown', 'DEADLINE_EXCEEDED'],
    [9, 'refused', 'RESULT_CONFLICT'],
    [12, 'applied', undefined],
  ])('marks write #%i as %s %s', (id, kind, reason) => {
    const mark = tags('mark write').find((t) => t['data-op'] === String(id));
    expect(mark?.class?.split(' ')).toContain(kind);
    expect(mark?.['data-reason']).toBe(reason);
    expect(element(id)).toMatch(new RegExp(`<title>#${id} Write by worker-\\w · token \\d`));
  });

  it('draws only writes as marks, besides operations a violation cites', () => {
    expect(tags('mark write')).toHaveLength(6);
    expect(tags('mark op').map((t) => [t['data-op'], t.class])).toEqual([['5', 'mark op acquire cited']]);
  });

  it('shades each fault across the lanes, labelled with name and target', () => {
    expect(tags('fault').map((t) => [t['data-fault'], t['data-target']])).toEqual([
      ['pause', 'worker-a'],
      ['latency', 'workers_to_sink'],
    ]);
    expect(html).toContain('pause → worker-a');
    expect(html.match(/<rect class="shade"/g)).toHaveLength(2);
  });

  it('labels a fault only where its label fits its band: a long run stays legible, each named on hover', () => {
    // A 30-minute soak: 1,000 faults of half a second or so, a few pixels each.
    const faults = Array.from({ length: 1_000 }, (_, i) => ({
      name: 'partition',
      target: 'coordinator_to_sink',
      startMs: 1_000 + i * 1_800,
      endMs: 1_500 + i * 1_800,
    }));
    const long = renderReport({
      history: {
        operations,
        final: history.final,
        faults: [...faults, { name: 'pause', target: 'sink', startMs: 0, endMs: 600_000 }],
      },
      violations: [],
      title: 't',
    });
    expect(long.match(/<g class="fault"/g)).toHaveLength(1_001);
    expect(long.match(/<title>partition on coordinator_to_sink: /g)).toHaveLength(1_000);
    expect(long).not.toContain('>partition → coordinator_to_sink</text>');
    expect(long).not.toContain('>partition</text>');
    // Ten minutes wide: that one has room for its label.
    expect(long).toContain('>pause → sink</text>');
  });

  it('escapes every text from the history and the caller', () => {
    expect(html).not.toContain(XSS);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<img');
    expect(html).toContain('chaos &amp; &lt;friends&gt;');
    expect(html.match(/<script>/g)).toHaveLength(1); // the report's own
  });

  it('rings the operations violations cite and lists the violations under an unsafe verdict', () => {
    expect(html).toMatch(/<div class="verdict unsafe" data-violations="2">UNSAFE: 2 violations · seed 42<\/div>/);
    expect(
      [...html.matchAll(/<li class="violation" data-rule="(\w+)" data-ops="([\d ]*)">/g)].map((m) => m.slice(1)),
    ).toEqual([
      ['S3', '6 7'],
      ['S1', '5'],
    ]);
    const ringed = operations.filter((o) => element(o.id).includes('class="ring"')).map((o) => o.id);
    expect(ringed).toEqual([5, 6, 7]);
    for (const id of [5, 6, 7]) expect(element(id)).toMatch(/^<g class="[^"]* cited"/);
  });

  it("flags the lock model's first violating operation, besides ringing what it cites", () => {
    const lock: Violation = {
      rule: 'LOCK',
      message: 'job-1: Renew #13 (worker-c) renewed …',
      operations: [11, 13],
      first: 13,
    };
    const flagged = renderReport({ history, violations: [lock], title: 't' });
    const of = (id: number) => flagged.match(new RegExp(`<g [^>]*data-op="${id}".*?</g>`))?.[0] ?? '';
    expect(of(13)).toMatch(/^<g class="mark op renew cited first"/);
    expect(of(13)).toContain('class="first-flag"');
    expect(of(13)).toContain('violates LOCK (its first violating operation)');
    // The call it conflicts with is ringed, not flagged.
    expect(of(11)).toMatch(/^<g class="lease cited"/);
    expect(of(11)).not.toContain('first-flag');
    expect(flagged).toContain('<li class="violation" data-rule="LOCK" data-ops="11 13" data-first="13">');
    expect(flagged).toContain('first violating operation (lock model)</span>');
    // S1–S6 violations name no first violating operation.
    expect(html).not.toMatch(/<g class="[^"]* first"/);
  });

  it('counts operations, acked writes, refusals by reason and faults', () => {
    const count = (key: string) => html.match(new RegExp(`data-count="${key}"><dt>[^<]*</dt><dd>(\\d+)</dd>`))?.[1];
    expect(
      [
        'operations',
        'leases',
        'acked-writes',
        'unknown',
        'refused:STALE_TOKEN',
        'refused:RESULT_CONFLICT',
        'faults',
      ].map(count),
    ).toEqual(['14', '3', '3', '1', '1', '1', '2']);
    expect(count('seconds')).toBe('3');
  });

  it('shows the clock uncertainty the check assumed', () => {
    expect(html).toContain('<div data-count="clock-uncertainty"><dt>clock uncertainty</dt><dd>1.250 ms</dd></div>');
  });

  it('says safe, with the seed, when there is no violation', () => {
    const safe = renderReport({ history, violations: [], title: 't', seed: 7 });
    expect(safe).toContain(
      '<div class="verdict safe" data-violations="0">SAFE: no violation of S1–S6 or the lock model · seed 7</div>',
    );
    expect(safe).not.toContain('class="ring"');
    expect(safe).not.toContain('class="mark op');
  });

  it('says unknown, and lists what was left unchecked, when the lock model could not judge all of it', () => {
    const message =
      'r: unchecked from Acquire #1 (a) on: 40 overlapping lease calls need more than 100000 search steps';
    const unknown = renderReport({
      history,
      violations: [],
      unchecked: [{ rule: 'LOCK', message, operations: [1] }],
      title: 't',
      seed: 7,
    });
    expect(unknown).toContain(
      '<div class="verdict unknown" data-violations="0">UNKNOWN: no violation found, but the lock model could not judge all of it · seed 7</div>',
    );
    expect(unknown).toContain(
      `<li class="violation unchecked" data-rule="LOCK" data-ops="1"><b>LOCK</b> ${message}</li>`,
    );
    expect(unknown).not.toContain('SAFE');
  });

  it('renders an empty history', () => {
    const empty = renderReport({
      history: { operations: [], final: { fences: {}, results: {} }, faults: [] },
      violations: [],
      title: 'empty',
    });
    expect(empty).toContain('<svg class="timeline"');
    expect(empty).not.toContain('NaN');
  });
});

describe('renderReport of a long run', () => {
  // 100,000 operations over 30 minutes: four workers on two resources, each
  // acquiring, writing three results and releasing in turn, a fault every 5 s,
  // and one violation in the middle.
  const long: Operation[] = [];
  for (let i = 0; long.length < 100_000; i++) {
    const owner = `worker-${'abcd'[i % 4]}`;
    const resource = `job-${(i % 2) + 1}`;
    const token = String(Math.floor(i / 2) + 1);
    const atMs = i * 90;
    long.push(
      op(
        owner,
        'Acquire',
        { resource, ...holder(owner), ttl_ms: 1000 },
        [atMs, atMs + 5],
        ok(lease(resource, owner, token)),
      ),
    );
    for (let step = 1; step <= 3; step++)
      long.push(
        op(
          owner,
          'Write',
          write(resource, token, `r${i}-${step}`),
          [atMs + 10 * step, atMs + 10 * step + 5],
          ok({ outcome: 'APPLIED', fence: token }),
        ),
      );
    long.push(
      op(owner, 'Release', { resource, ...holder(owner), token }, [atMs + 50, atMs + 55], ok({ released: true })),
    );
  }
  const cited = long[50_001]!;
  const faults = Array.from({ length: 360 }, (_, i) => ({
    name: 'partition',
    target: 'worker-a',
    startMs: i * 5_000,
    endMs: i * 5_000 + 1_000,
  }));
  const report = renderReport({
    history: { operations: long, final: { fences: {}, results: {} }, faults },
    violations: [{ rule: 'S3', message: 'a write after a takeover', operations: [cited.id] }],
    title: 'long',
  });

  it('stays under 4 MB and draws at most DETAIL_LIMIT operations one by one', () => {
    expect(report.length).toBeLessThan(4_000_000);
    const drawn = Number(/data-count="drawn"><dt>[^<]*<\/dt><dd>(\d+)<\/dd>/.exec(report)?.[1]);
    expect(drawn).toBeGreaterThan(0);
    expect(drawn).toBeLessThanOrEqual(DETAIL_LIMIT + 1);
    expect(report).toContain('<div data-count="operations"><dt>operations</dt><dd>100000</dd></div>');
    // The rest are counted: every slice's bar says how many calls it stands for.
    expect(report).toMatch(/<g class="bucket" data-process="worker-a" data-slice="\d+"><title>worker-a on job-1, /);
  });

  it('still draws and rings the operation the violation cites, with its neighbours', () => {
    const mark = report.match(new RegExp(`<g class="mark write applied cited" data-op="${cited.id}".*?</g>`))?.[0];
    expect(mark).toContain('class="ring"');
    expect(report).toContain(`data-op="${cited.id - 1}"`);
    expect(report).toContain(`data-op="${cited.id + 1}"`);
  });
});
