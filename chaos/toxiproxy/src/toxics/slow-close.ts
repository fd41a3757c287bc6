// slow_close (TOXIPROXY-API.md §6.3): data passes unchanged; the close that
// follows the source's EOF is held back for `delay` ms.
import { sleep, type StageContext, type ToxicBehaviour } from './stage.js';

/** slow_close: `delay` ms (int64) between the source's EOF and passing the close on. */
export function slowClose(attributes: { delay: number }, context: StageContext): ToxicBehaviour {
  return {
    chunk: (chunk) => context.emit(chunk),
    end: () => sleep(attributes.delay, context.signal),
  };
}
