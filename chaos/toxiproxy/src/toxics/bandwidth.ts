// bandwidth (TOXIPROXY-API.md §6.2): `rate` KB/s, KB = 1000 bytes, so a
// chunk costs len/rate ms; big chunks go out as rate*100-byte pieces every
// 100 ms. A rate of 0 or less holds everything until the toxic goes away.
import { sleep, untilAborted, type StageContext, type ToxicBehaviour } from './stage.js';

/** bandwidth: `rate` in KB/s (int64); ≤ 0 stalls the stream until the toxic is removed or updated. */
export function bandwidth(attributes: { rate: number }, context: StageContext): ToxicBehaviour {
  // Timer overshoot (negative) or undershoot carried into the next delay, so
  // the average rate holds even though timers fire late.
  let carryMs = 0;
  return {
    async chunk(chunk) {
      if (attributes.rate <= 0) {
        await untilAborted(context.signal);
        await context.emit(chunk);
        return;
      }
      const pieceBytes = attributes.rate * 100;
      let rest = chunk.data;
      while (rest.length > 0) {
        if (context.signal.aborted) {
          await context.emit({ data: rest, receivedAtMs: chunk.receivedAtMs });
          return;
        }
        const piece = rest.subarray(0, pieceBytes);
        rest = rest.subarray(piece.length);
        const plannedMs = piece.length / attributes.rate + carryMs;
        const startedMs = performance.now();
        await sleep(plannedMs, context.signal);
        carryMs = context.signal.aborted ? 0 : plannedMs - (performance.now() - startedMs);
        await context.emit({ data: piece, receivedAtMs: chunk.receivedAtMs });
      }
    },
  };
}
