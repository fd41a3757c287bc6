// The exported history: Jepsen-shaped events in time order (invocations
// first on a tie), unknown outcomes as info, the nemesis's faults, UTF-8
// payloads, uint64 fields as strings (as recorded), the final state per
// resource, and the file streamed out.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '@fencer/testkit';
import type { History, Operation } from '../checker/history.js';
import { historyLines, writeHistory } from './json-lines.js';

const MAX_UINT64 = '18446744073709551615';
const PAYLOAD = 'héllo ✓ "quoted"\nline';
const op = (
  id: number,
  process: string,
  method: Operation['method'],
  request: Record<string, unknown>,
  [invokedMs, completedMs]: [number, number],
  outcome: Operation['outcome'],
): Operation => ({ id, process, method, request, invokedMs, completedMs, outcome });
const lease = { resource: 'job-1', owner_id: 'worker-a', incarnation: '1', token: '1', ttl_ms: '1000' };

const history: History = {
  operations: [
    op(1, 'worker-a', 'Acquire', { request_id: 'q1', ...lease }, [1000, 1010.5], {
      type: 'ok',
      response: { lease, replayed: false },
    }),
    op(2, 'worker-b', 'Acquire', { request_id: 'q2', resource: 'job-1' }, [1005, 1007], {
      type: 'fail',
      code: 'ABORTED',
      reason: 'LEASE_HELD',
    }),
    {
      ...op(3, 'worker-a', 'Write', { resource: 'job-1', token: '1', result_id: 'r', payload: PAYLOAD }, [1020, 1030], {
        type: 'unknown',
        code: 'DEADLINE_EXCEEDED',
        reason: '',
      }),
      streamed: true,
    },
    // Sent at the instant #3 ended: concurrent with it, so its invocation comes first.
    op(4, 'worker-b', 'Read', { resource: 'job-1', result_id: 'r' }, [1030, 1040], {
      type: 'ok',
      response: { payload: PAYLOAD, token: '1' },
    }),
    op(5, 'worker-b', 'GetFence', { resource: 'job-2' }, [1041, 1042], { type: 'ok', response: { fence: MAX_UINT64 } }),
    op(6, 'worker-a', 'Release', { resource: 'job-1', token: '1' }, [1050, 1051], {
      type: 'ok',
      response: { released: true },
    }),
  ],
  final: {
    fences: { 'job-2': MAX_UINT64, 'job-1': '1' },
    results: { 'job-1': { r: { token: '1', payload: PAYLOAD }, gone: null }, 'job-3': {} },
  },
  faults: [],
};
const lines = [...historyLines(history)];
const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
const events = parsed.filter((e) => e.type !== 'final');

/** The same calls with the nemesis's faults: one before the first call, one healed at an instant a call was sent and another ended, one never healed. */
const faulted: History = {
  ...history,
  faults: [
    { name: 'partition', target: 'worker-a link', startMs: 990, endMs: 1030 },
    { name: 'pause', target: 'coordinator', startMs: 1041.5 },
  ],
};
const faultedEvents = [...historyLines(faulted)].map((line) => JSON.parse(line) as Record<string, unknown>);

describe('historyLines', () => {
  it('gives an invocation and a completion per call, in time order, invocations first on a tie', () => {
    expect(events.map((e) => [e.index, e.type, e.id, e.time])).toEqual([
      [0, 'invoke', 1, 0],
      [1, 'invoke', 2, 5_000_000],
      [2, 'fail', 2, 7_000_000],
      [3, 'ok', 1, 10_500_000],
      [4, 'invoke', 3, 20_000_000],
      [5, 'invoke', 4, 30_000_000],
      [6, 'info', 3, 30_000_000],
      [7, 'ok', 4, 40_000_000],
      [8, 'invoke', 5, 41_000_000],
      [9, 'ok', 5, 42_000_000],
      [10, 'invoke', 6, 50_000_000],
      [11, 'ok', 6, 51_000_000],
    ]);
  });

  it('names the process and f, the request on invocation, and the answer or the refusal on completion', () => {
    expect(events.slice(0, 3)).toEqual([
      {
        index: 0,
        time: 0,
        process: 'worker-a',
        type: 'invoke',
        f: 'acquire',
        id: 1,
        value: { request: { request_id: 'q1', ...lease } },
      },
      {
        index: 1,
        time: 5_000_000,
        process: 'worker-b',
        type: 'invoke',
        f: 'acquire',
        id: 2,
        value: { request: { request_id: 'q2', resource: 'job-1' } },
      },
      {
        index: 2,
        time: 7_000_000,
        process: 'worker-b',
        type: 'fail',
        f: 'acquire',
        id: 2,
        value: { request: { request_id: 'q2', resource: 'job-1' }, error: { code: 'ABORTED', reason: 'LEASE_HELD' } },
      },
    ]);
    expect(events.find((e) => e.id === 1 && e.type === 'ok')?.value).toEqual({
      request: { request_id: 'q1', ...lease },
      response: { lease, replayed: false },
    });
    expect(new Set(events.map((e) => e.f))).toEqual(new Set(['acquire', 'write', 'read', 'get-fence', 'release']));
  });

  it('marks both events of a call sent as a stream message, and no other', () => {
    expect(events.filter((e) => e.streamed === true).map((e) => [e.id, e.type])).toEqual([
      [3, 'invoke'],
      [3, 'info'],
    ]);
    expect(events.filter((e) => 'streamed' in e && e.streamed !== true)).toEqual([]);
  });

  it('writes an unknown outcome as info, with its code', () => {
    expect(events.find((e) => e.id === 3 && e.type !== 'invoke')).toMatchObject({
      type: 'info',
      f: 'write',
      value: { error: { code: 'DEADLINE_EXCEEDED', reason: '' } },
    });
  });

  it('keeps payloads as UTF-8 text and uint64 fields as decimal strings', () => {
    expect(lines.find((line) => line.includes('"f":"write"'))).toContain('héllo ✓ \\"quoted\\"\\nline');
    expect(events.find((e) => e.id === 4 && e.type === 'ok')?.value).toMatchObject({ response: { payload: PAYLOAD } });
    expect(events.find((e) => e.id === 5 && e.type === 'ok')?.value).toMatchObject({ response: { fence: MAX_UINT64 } });
    expect(events.find((e) => e.id === 6)?.value).toEqual({ request: { resource: 'job-1', token: '1' } });
    for (const line of lines) expect(line).not.toContain('\n');
  });

  it("puts each fault's start and heal among the calls as the nemesis process's info events, timed from the earliest", () => {
    const nemesis = faultedEvents.filter((e) => e.process === 'nemesis');
    expect(nemesis).toEqual([
      {
        index: 0,
        time: 0,
        process: 'nemesis',
        type: 'info',
        f: 'start',
        value: { fault: 'partition', target: 'worker-a link' },
      },
      {
        index: 7,
        time: 40_000_000,
        process: 'nemesis',
        type: 'info',
        f: 'stop',
        value: { fault: 'partition', target: 'worker-a link' },
      },
      {
        index: 11,
        time: 51_500_000,
        process: 'nemesis',
        type: 'info',
        f: 'start',
        value: { fault: 'pause', target: 'coordinator' },
      },
    ]);
    // The first call now comes 10 ms after the origin; at 1030 the heal sits after #4's sending and before #3's end.
    expect(faultedEvents.slice(0, 9).map((e) => [e.process, e.type, e.id, e.time])).toEqual([
      ['nemesis', 'info', undefined, 0],
      ['worker-a', 'invoke', 1, 10_000_000],
      ['worker-b', 'invoke', 2, 15_000_000],
      ['worker-b', 'fail', 2, 17_000_000],
      ['worker-a', 'ok', 1, 20_500_000],
      ['worker-a', 'invoke', 3, 30_000_000],
      ['worker-b', 'invoke', 4, 40_000_000],
      ['nemesis', 'info', undefined, 40_000_000],
      ['worker-a', 'info', 3, 40_000_000],
    ]);
    // Every call's events are still there, in the same order.
    expect(faultedEvents.filter((e) => e.process !== 'nemesis').map((e) => [e.type, e.id])).toEqual(
      parsed.map((e) => [e.type, e.id]),
    );
  });

  it('ends with the final state, one line per resource in name order', () => {
    expect(parsed.slice(events.length)).toEqual([
      { type: 'final', resource: 'job-1', fence: '1', results: { r: { token: '1', payload: PAYLOAD }, gone: null } },
      { type: 'final', resource: 'job-2', fence: MAX_UINT64, results: {} },
      { type: 'final', resource: 'job-3', results: {} },
    ]);
  });
});

describe('writeHistory', () => {
  const dir = tempDir('fencer-history-');
  afterAll(() => dir.remove());

  it('writes the lines to a file, creating its folder', async () => {
    const path = join(dir.path, 'run', 'history.jsonl');
    await writeHistory(path, history);
    expect(readFileSync(path, 'utf8')).toBe(lines.map((line) => `${line}\n`).join(''));
  });

  it('streams a long history through', async () => {
    const path = join(dir.path, 'long.jsonl');
    const operations = Array.from({ length: 20_000 }, (_, i) =>
      op(
        i + 1,
        `worker-${i % 4}`,
        'Write',
        { resource: 'job-1', token: '1', result_id: `r${i}`, payload: 'x' },
        [i, i + 1],
        {
          type: 'ok',
          response: { outcome: 'APPLIED', fence: '1' },
        },
      ),
    );
    await writeHistory(path, { operations, final: { fences: {}, results: {} }, faults: [] });
    const written = readFileSync(path, 'utf8').split('\n');
    expect(written).toHaveLength(40_001); // every event, then the empty string after the last line feed
    expect(JSON.parse(written[39_999]!)).toMatchObject({ index: 39_999, type: 'ok', id: 20_000 });
  });
});
