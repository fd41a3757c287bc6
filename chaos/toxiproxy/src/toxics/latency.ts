// latency (TOXIPROXY-API.md §6.1): each chunk leaves `latency ± jitter` ms
// after it was received, and carries the delay on in its time stamp so that
// stacked latency toxics add up.
import { randomInt, sleep, type StageContext, type ToxicBehaviour } from './stage.js';

/** latency: `latency` ms (int64), `jitter` ms (int64), jitter drawn per chunk in [-jitter, +jitter). */
export function latency(attributes: { latency: number; jitter: number }, context: StageContext): ToxicBehaviour {
  return {
    async chunk(chunk) {
      const jitter = attributes.jitter > 0 ? randomInt(-attributes.jitter, attributes.jitter) : 0;
      const delayMs = Math.max(0, attributes.latency + jitter);
      // Measured from the receive time, not from when this stage got the
      // chunk: time spent queued behind earlier chunks counts.
      await sleep(chunk.receivedAtMs + delayMs - performance.now(), context.signal);
      await context.emit({ data: chunk.data, receivedAtMs: chunk.receivedAtMs + delayMs });
    },
  };
}
