// limit_data (TOXIPROXY-API.md §6.7): lets `bytes` bytes through this link,
// cuts the chunk that crosses the limit short, then closes with a FIN. The
// count lives in the link's memory of the toxic, so updates keep it.
import type { StageContext, ToxicBehaviour, ToxicMemory } from './stage.js';

/** limit_data: `bytes` (int64) allowed through this link in total; 0 closes on the first chunk. */
export function limitData(attributes: { bytes: number }, context: StageContext, memory: ToxicMemory): ToxicBehaviour {
  return {
    async chunk(chunk) {
      const room = attributes.bytes - memory.transmitted;
      if (chunk.data.length < room) {
        memory.transmitted += chunk.data.length;
        await context.emit(chunk);
        return;
      }
      const allowed = chunk.data.subarray(0, Math.max(0, room));
      memory.transmitted += allowed.length;
      if (allowed.length > 0) await context.emit({ data: allowed, receivedAtMs: chunk.receivedAtMs });
      context.close('fin');
    },
  };
}
