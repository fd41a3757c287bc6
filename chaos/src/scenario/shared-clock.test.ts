import { describe, expect, it } from 'vitest';
import type { StampedWorkerEvent } from '@fencer/supervisor';
import { onSharedClock } from './shared-clock.js';

const sending = (seq: number, sentAtMs: number) =>
  ({ event: 'sending', seq, method: 'Release', request: {}, sentAtMs }) as unknown as StampedWorkerEvent;
const call = (seq: number, sentAtMs: number) =>
  ({
    event: 'call',
    seq,
    method: 'Release',
    request: {},
    sentAtMs,
    doneAtMs: sentAtMs + 1,
    outcome: 'ok',
    response: {},
  }) as unknown as StampedWorkerEvent;
const times = (event: StampedWorkerEvent) => ({
  sentAtMs: (event as { sentAtMs?: number }).sentAtMs,
  doneAtMs: (event as { doneAtMs?: number }).doneAtMs,
});

/** A mapping whose clock model is `aheadMs` ahead of the truth, read by this process at the times given. */
function mapping(aheadMs: number, readsMs: number[]) {
  const clock = { earliestSharedMs: (fakeMs: number) => fakeMs + aheadMs };
  return onSharedClock(clock, () => readsMs.shift()!);
}

describe('onSharedClock', () => {
  it('takes the model where it is earlier than the sending line', () => {
    const map = mapping(-5, [101, 130]);
    expect(times(map(sending(1, 100)))).toEqual({ sentAtMs: 95, doneAtMs: undefined });
    expect(times(map(call(1, 100)))).toEqual({ sentAtMs: 95, doneAtMs: 130 });
  });

  it('never maps a sending after this process read its line, where the model runs ahead', () => {
    // The model says 120, 20 ms after the stamp; the line was read at 105 and the answer at 110.
    const map = mapping(20, [105, 110]);
    expect(times(map(sending(1, 100)))).toEqual({ sentAtMs: 105, doneAtMs: undefined });
    // Without the bound its window would be empty (sent 120, done 110), and a checker would drop the call.
    expect(times(map(call(1, 100)))).toEqual({ sentAtMs: 105, doneAtMs: 110 });
  });

  it('keeps each call in flight to its own line, and bounds a call whose line it never saw by its end', () => {
    const map = mapping(20, [105, 106, 140, 150, 160]);
    map(sending(1, 100));
    map(sending(2, 100));
    expect(times(map(call(2, 100)))).toEqual({ sentAtMs: 106, doneAtMs: 140 });
    expect(times(map(call(1, 100)))).toEqual({ sentAtMs: 105, doneAtMs: 150 });
    expect(times(map(call(3, 150)))).toEqual({ sentAtMs: 160, doneAtMs: 160 });
  });
});
