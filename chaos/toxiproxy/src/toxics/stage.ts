// What a toxic sees of the link it runs on (TOXIPROXY-API.md §5, chain
// model): chunks stamped with their receive time, a way to pass them on, a
// way to close the connection, and a signal that says "stop holding data".

/** One read from a socket, stamped with performance.now() (ms) when it arrived. */
export interface Chunk {
  readonly data: Buffer;
  readonly receivedAtMs: number;
}

/** How a toxic closes its connection: `reset` sends RST only where SO_LINGER=0 was set at accept (§6.5). */
export type CloseKind = 'fin' | 'reset';

/** The link around one run of a toxic; a run ends when the toxic is updated, removed, restarted or the link closes. */
export interface StageContext {
  /** Aborted when this run ends; a toxic then forwards what it holds at once (data is never lost, §6.1). */
  readonly signal: AbortSignal;
  /** Passes a chunk on to the next stage; resolves once it was written downstream (backpressure) or dropped with a closed link. */
  emit(chunk: Chunk): Promise<void>;
  /** Ends the connection, as timeout, reset_peer and limit_data do. */
  close(kind: CloseKind): void;
}

/** What a toxic keeps on one link across restarts (§4: an update keeps limit_data's byte count). */
export interface ToxicMemory {
  /** Bytes limit_data has let through on this link. */
  transmitted: number;
}

/** One run of a toxic on one link. Chunks arrive one at a time, in order. */
export interface ToxicBehaviour {
  /** Called once when the run starts (timeout arms its timer here). */
  start?(): void;
  /** Handles one chunk; resolves when the stage may take the next one. */
  chunk(chunk: Chunk): Promise<void>;
  /** Called when the source hit EOF, before the close travels on (slow_close waits here). */
  end?(): Promise<void>;
}

/** A stage that passes everything through: noop, and any toxic whose toxicity draw missed (§5). */
export function passThrough(context: StageContext): ToxicBehaviour {
  return { chunk: (chunk) => context.emit(chunk) };
}

/** Resolves after `ms` milliseconds, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Resolves when `signal` aborts: how a toxic holds data "forever". */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** A uniform random integer in [min, max). */
export function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min));
}
