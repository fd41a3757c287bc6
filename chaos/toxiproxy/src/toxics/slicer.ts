// slicer (TOXIPROXY-API.md §6.6): each chunk is cut into pieces of about
// `average_size` bytes by halving it again and again, each cut shifted by up
// to ±`size_variation`; the pieces go out in order with `delay` µs after each.
import { randomInt, sleep, type StageContext, type ToxicBehaviour } from './stage.js';

/** Piece sizes for `length` bytes; every piece is ≥ 1 byte and they sum to `length`. */
export function sliceSizes(length: number, averageSize: number, sizeVariation: number): number[] {
  const variation = Math.max(0, sizeVariation);
  const largest = Math.max(1, averageSize + variation);
  const sizes: number[] = [];
  // An explicit stack instead of recursion: left halves are emitted first.
  const pending = [length];
  while (pending.length > 0) {
    const size = pending.pop()!;
    if (size <= largest) {
      sizes.push(size);
      continue;
    }
    const cut = Math.floor(size / 2) + (variation > 0 ? randomInt(-variation, variation + 1) : 0);
    const left = Math.min(size - 1, Math.max(1, cut));
    pending.push(size - left, left);
  }
  return sizes;
}

/**
 * slicer: `average_size` and `size_variation` in bytes, `delay` in µs. An
 * average_size ≤ 0 passes chunks through whole (§6.6: the real server would
 * recurse forever there).
 */
export function slicer(
  attributes: { average_size: number; size_variation: number; delay: number },
  context: StageContext,
): ToxicBehaviour {
  return {
    async chunk(chunk) {
      if (attributes.average_size <= 0) {
        await context.emit(chunk);
        return;
      }
      let offset = 0;
      for (const size of sliceSizes(chunk.data.length, attributes.average_size, attributes.size_variation)) {
        if (context.signal.aborted) break;
        await context.emit({ data: chunk.data.subarray(offset, offset + size), receivedAtMs: chunk.receivedAtMs });
        offset += size;
        await sleep(attributes.delay / 1000, context.signal);
      }
      // Interrupted mid-chunk: the rest goes on at once, in one piece.
      if (offset < chunk.data.length) {
        await context.emit({ data: chunk.data.subarray(offset), receivedAtMs: chunk.receivedAtMs });
      }
    },
  };
}
