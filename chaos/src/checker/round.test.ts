// The round checker on hand-written histories: silent on a safe one, and
// naming the invariant for each way a broken sink shows up. The sink's
// interleaving test runs the same checker on histories recorded from a real
// sink and from a deliberately two-step one.
import { describe, expect, it } from 'vitest';
import { checkRound, racingPayload, successorPayload, type RoundHistory } from './round.js';

const t = 4n;
const old = (i: number) => ({ token: '4', payload: racingPayload(t, i) });
const successor = (i: number) => ({ token: '5', payload: successorPayload(t, i) });
const applied = (fence: string) => ({ outcome: 'APPLIED', fence });
const stale = { outcome: 'STALE_TOKEN', fence: '5' };

/** w-0 won the race, w-1 lost it; everything after the advance as the protocol says. */
const safe: RoundHistory = {
  resource: 'job',
  t,
  advance: { fence: '5' },
  racing: [applied('4'), stale],
  readAfterAdvance: [old(0), undefined],
  successor: [{ outcome: 'RESULT_CONFLICT', fence: '5' }, applied('5')],
  late: [stale],
  final: [old(0), successor(1)],
};

const rules = (h: RoundHistory) =>
  checkRound(h)
    .map((v) => v.rule)
    .sort();

describe('checkRound', () => {
  it('finds nothing in a safe round', () => {
    expect(checkRound(safe)).toEqual([]);
  });

  it.each<[string, Partial<RoundHistory>, string[]]>([
    // A sink that checks the fence, lets the advance in, then commits: the
    // old write lands after the ack, over the successor's.
    [
      'a check and a commit in two steps',
      {
        readAfterAdvance: [undefined, undefined],
        successor: [applied('5'), applied('5')],
        final: [old(0), successor(1)],
      },
      ['S3', 'S4', 'S6', 'protocol'],
    ],
    ['a token-t write accepted after the ack (a sink accepting token >= fence)', { late: [applied('5')] }, ['S3']],
    ['an acknowledged write that is gone', { final: [undefined, successor(1)] }, ['S5']],
    ['a refused write stored anyway, over its successor', { final: [old(0), old(1)] }, ['S3', 'S4']],
    ['an advance that was never acknowledged', { advance: { error: 'UNAVAILABLE' } }, ['protocol']],
  ])('names %s', (_name, change, expected) => {
    expect(rules({ ...safe, ...change })).toEqual(expected);
  });
});
