// How a recorded call is decoded for the checker and the report: its
// request's and answer's fields typed, absent ones read as none, and each
// operation decoded once however many readers ask.
import { describe, expect, it } from 'vitest';
import type { Operation, Outcome } from './history.js';
import { EMPTY_LEASE, callOf } from './records.js';

const op = (method: Operation['method'], request: Operation['request'], outcome: Outcome): Operation => ({
  id: 1,
  process: 'worker-a',
  method,
  request,
  invokedMs: 10,
  completedMs: 20,
  outcome,
});
const lease = { resource: 'r', owner_id: 'a', incarnation: '2', token: '7', ttl_ms: '1000' };

describe('callOf', () => {
  it.each([
    [
      'an ok Acquire',
      op(
        'Acquire',
        { request_id: 'q', resource: 'r', owner_id: 'a', incarnation: 2, ttl_ms: 1000 },
        { type: 'ok', response: { lease, replayed: true } },
      ),
      {
        resource: 'r',
        holder: 'a#2',
        token: 0n,
        requestId: 'q',
        ttlMs: 1000,
        reason: '',
        answer: expect.objectContaining({
          lease: { resource: 'r', holder: 'a#2', token: 7n, ttlMs: 1000 },
          replayed: true,
        }),
      },
    ],
    [
      'an ok Write',
      op(
        'Write',
        { resource: 'r', token: '7', result_id: 'x', payload: 'p' },
        { type: 'ok', response: { outcome: 'APPLIED', fence: '7' } },
      ),
      {
        token: 7n,
        resultId: 'x',
        payload: 'p',
        answer: { lease: EMPTY_LEASE, replayed: false, released: false, outcome: 'APPLIED', fence: 7n, payload: '' },
      },
    ],
    [
      'a refused Write',
      op('Write', { resource: 'r', token: '6' }, { type: 'fail', code: 'FAILED_PRECONDITION', reason: 'STALE_TOKEN' }),
      { token: 6n, resultId: '', reason: 'STALE_TOKEN' },
    ],
    [
      'an unknown Release without a reason',
      op('Release', { resource: 'r', token: '6' }, { type: 'unknown', code: 'UNAVAILABLE', reason: '' }),
      { reason: 'UNAVAILABLE' },
    ],
  ])('%s', (_, operation, expected) => {
    expect(callOf(operation)).toMatchObject(expected);
    // Only an ok call has an answer.
    expect(callOf(operation).answer === undefined).toBe(operation.outcome.type !== 'ok');
  });

  it('decodes an operation once', () => {
    const read = op('Read', { resource: 'r', result_id: 'x' }, { type: 'ok', response: { payload: 'p', token: '7' } });
    expect(callOf(read)).toBe(callOf(read));
    expect(callOf(read).answer?.payload).toBe('p');
  });
});
