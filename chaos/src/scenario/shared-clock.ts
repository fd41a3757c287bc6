// A worker on a fake clock (libfaketime) stamps its calls on that clock;
// the history needs them on the shared clock, the one the other processes
// and the faults are stamped on.
import type { StampedWorkerEvent } from '@fencer/supervisor';
import type { FaketimeClock } from '../nemesis/clock.js';

/**
 * Maps a fake-clock worker's events to the shared clock: a call is sent at
 * the earliest time the clock's model allows (earliestSharedMs), but never
 * after this process saw the worker's `sending` line, and done when this
 * process read the call's end (never earlier).
 *
 * The bound by the `sending` line is there because the model can run
 * ahead of the process: in a soak (seed 1398913728) a worker's mapped
 * sendings came up to 22 ms after this process had its answers, 171 of its
 * 622 calls with their ends before their starts. The lock model then left
 * out a Release whose window was empty, and accused the coordinator of a
 * grant over the lease it had released (L2). The worker stamps a call
 * before it writes the line, so the line's receipt is never before the
 * stamp; it is later by at most the pipe's delay.
 */
export function onSharedClock(
  clock: Pick<FaketimeClock, 'earliestSharedMs'>,
  nowMs: () => number = () => performance.timeOrigin + performance.now(),
): (event: StampedWorkerEvent) => StampedWorkerEvent {
  // When each call in flight had its `sending` line read, by its seq.
  const sendingSeenMs = new Map<number, number>();
  return (event) => {
    switch (event.event) {
      case 'sending': {
        const seenMs = nowMs();
        sendingSeenMs.set(event.seq, seenMs);
        return { ...event, sentAtMs: Math.min(clock.earliestSharedMs(event.sentAtMs), seenMs) };
      }
      case 'call': {
        const doneAtMs = nowMs();
        const seenMs = sendingSeenMs.get(event.seq) ?? doneAtMs;
        sendingSeenMs.delete(event.seq);
        return { ...event, sentAtMs: Math.min(clock.earliestSharedMs(event.sentAtMs), seenMs), doneAtMs };
      }
      default:
        return event;
    }
  };
}
