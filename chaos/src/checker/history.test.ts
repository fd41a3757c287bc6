// How a worker's call event becomes a history operation: which failures
// leave the call's effect unknown, and which certainly changed nothing.
import { describe, expect, it } from 'vitest';
import type { CallEvent } from '@fencer/worker';
import { operationFromCall } from './history.js';

const call = (outcome: string, code?: string): CallEvent => ({
  event: 'call',
  seq: 1,
  method: 'Write',
  request: { resource: 'r', token: '1', result_id: 'x', payload: 'p' },
  sentAtMs: 10,
  doneAtMs: 20,
  outcome,
  ...(code === undefined ? { response: { outcome: 'APPLIED', fence: '1' } } : { code }),
});

describe('operationFromCall', () => {
  it.each([
    ['ok', undefined, 'ok'],
    ['STALE_TOKEN', 'FAILED_PRECONDITION', 'fail'],
    ['RESULT_CONFLICT', 'ALREADY_EXISTS', 'fail'],
    ['', 'DEADLINE_EXCEEDED', 'unknown'],
    ['', 'UNAVAILABLE', 'unknown'],
    ['UNAVAILABLE', 'UNAVAILABLE', 'unknown'], // the server failed while acting
    ['SINK_UNAVAILABLE', 'UNAVAILABLE', 'fail'], // L3: nothing was granted
    ['INTERNAL', 'INTERNAL', 'unknown'],
  ])('%s (%s) is %s', (outcome, code, type) => {
    const op = operationFromCall(7, 'worker-a', call(outcome, code));
    expect([op.id, op.process, op.invokedMs, op.completedMs, op.outcome.type]).toEqual([7, 'worker-a', 10, 20, type]);
  });

  it('keeps whether the call went as a stream message', () => {
    expect(operationFromCall(1, 'worker-a', { ...call('ok'), streamed: true }).streamed).toBe(true);
    expect('streamed' in operationFromCall(2, 'worker-a', call('ok'))).toBe(false);
  });
});
