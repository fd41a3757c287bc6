// A6: the memory that calls leave behind is bounded, whatever their number.
// Every header value of an HTTP/2 request reaches JavaScript as an external
// string over nghttp2's own buffer (Node's http2 binding,
// NgRcBufPointer::External), so its bytes live outside V8's heap, and the
// objects that hold them outlive young-generation collections: only a full
// collection frees them. V8 schedules full collections by the growth of its
// own heap, which such strings barely move. Measured on a sink (issue 17):
// 20,000 unauthenticated calls with 16 KB of headers each left 317 MiB of
// external memory and 335 MiB more RSS while V8's heap stayed near 30 MiB;
// one full collection brought the external memory back to 10 MiB, and with
// no collection it stays, idle or not.
//
// V8's heap cannot be sized from inside a running process, and a launcher
// that re-executes `fencer sink` under other flags would put a second pid in
// front of the server, which SIGSTOP and SIGKILL by pid (supervisor, chaos
// nemeses) would no longer reach. So the process watches its external memory
// and asks for a full collection when it has grown past a budget since the
// last one: what those calls hold stays within the budget and what arrives
// between two reads, whoever sends them and whatever their headers weigh
// (test/unauthenticated-flood.test.ts: RSS +135 MiB under 60,000 such calls
// with 14 KiB of headers, against +400 to +620 MiB without).
import v8 from 'node:v8';
import vm from 'node:vm';
import { RepeatLimiter, type Logger } from './log.js';
import { memoryCollections } from './metrics.js';

const MiB = 1024 * 1024;

/**
 * Growth of external memory that triggers a full collection: V8's own soft
 * limit for the external memory it is told of (ArrayBuffers, so request and
 * response buffers), which it collects for already, so honest traffic
 * rarely adds a collection. A flood's leftovers stay a small multiple of it.
 */
const BUDGET_BYTES = 64 * MiB;
/** How often external memory is read: a flood adds a few MiB between two reads. */
const CHECK_MS = 250;

let holders = 0;
let timer: NodeJS.Timeout | undefined;

/**
 * Keeps external memory within BUDGET_BYTES of what the last full collection
 * left, for as long as one holder keeps it; process-wide, however many
 * servers hold it. Returns the release; the last release stops the watch.
 * Each forced collection is counted (fencer_memory_collections_total) and
 * logged at most once a minute, to the first holder's `log`.
 */
export function holdMemoryBound(log: Logger): () => void {
  holders++;
  timer ??= watch(log);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

function watch(log: Logger): NodeJS.Timeout {
  const collect = fullCollection();
  const lines = new RepeatLimiter({ windowMs: 60_000, maxKeysPerWindow: 1 });
  let floor = process.memoryUsage().external;
  const check = setInterval(() => {
    const before = process.memoryUsage().external;
    if (before <= floor + BUDGET_BYTES) {
      // Follow it down too: the budget counts from the lowest point since the last collection.
      floor = Math.min(floor, before);
      return;
    }
    collect();
    floor = process.memoryUsage().external;
    memoryCollections.inc();
    const admitted = lines.admit('collected');
    if (admitted.log)
      log.info(
        { externalMiB: Math.round(before / MiB), afterMiB: Math.round(floor / MiB), heldBack: admitted.heldBack },
        'collected garbage held outside the JavaScript heap (A6)',
      );
  }, CHECK_MS);
  // The watch alone never keeps a process alive.
  check.unref();
  return check;
}

/** V8's full collection: global `gc` when the process was started with --expose-gc, else exposed now. */
function fullCollection(): () => void {
  const exposed = globalThis.gc;
  if (exposed) return () => void exposed();
  // The flag applies to contexts created from now on; the new context's `gc` collects the whole isolate.
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
