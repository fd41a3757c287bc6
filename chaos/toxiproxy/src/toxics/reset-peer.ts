// reset_peer (TOXIPROXY-API.md §6.5): idle until the first chunk, which is
// dropped; `timeout` ms later the connection is closed, with an RST if the
// toxic was there when the connection was accepted (see connection.ts).
import { sleep, type StageContext, type ToxicBehaviour } from './stage.js';

/** reset_peer: `timeout` ms (int64) from the first chunk to the reset; 0 resets at once. */
export function resetPeer(attributes: { timeout: number }, context: StageContext): ToxicBehaviour {
  return {
    async chunk() {
      // Nothing else enters this stage while it waits: later chunks queue
      // behind it, as they would behind the real toxic.
      await sleep(attributes.timeout, context.signal);
      if (!context.signal.aborted) context.close('reset');
    },
  };
}
