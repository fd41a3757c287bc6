// timeout (TOXIPROXY-API.md §6.4): every chunk in its direction is dropped;
// with timeout > 0 the connection closes (FIN) once no chunk arrived for that
// many ms. Removing the toxic closes the connection too (see toxics/index.ts).
import type { StageContext, ToxicBehaviour } from './stage.js';

/** timeout: `timeout` ms (int64); 0 drops data forever without closing. */
export function timeout(attributes: { timeout: number }, context: StageContext): ToxicBehaviour {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    if (attributes.timeout > 0) timer = setTimeout(() => context.close('fin'), attributes.timeout);
  };
  context.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  return {
    // The timer starts with the run: an idle connection times out too.
    start: arm,
    // The chunk is dropped, and it counts as activity: the timer restarts.
    chunk: () => {
      arm();
      return Promise.resolve();
    },
  };
}
