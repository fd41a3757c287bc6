// One direction of one proxied connection (TOXIPROXY-API.md §3.2): read
// chunks from the source socket, stamp them, run them through this
// direction's toxics, write them to the destination socket.
//
// The chain is a linked list of stages that a chunk walks one stage at a
// time; `emit` looks up the stage's `next` when it is called. So a toxic can
// be appended, restarted or unlinked while chunks are inside the chain, and
// a chunk held by a stage that goes away is still passed on to the stage
// that followed it: no byte is lost or reordered. One chunk is in the chain
// at a time, which also gives backpressure: the source is paused while the
// input queue is full, and the destination's 'drain' gates the next write.
import type { Socket } from 'node:net';
import type { Logger } from '@fencer/server-kit';
import type { ToxicSpec } from './toxic-spec.js';
import { TOXICS } from './toxics/index.js';
import { passThrough, type Chunk, type CloseKind, type ToxicBehaviour, type ToxicMemory } from './toxics/stage.js';

// Reads continue while a toxic holds a chunk, so chunks are stamped when they
// arrive (§5: latency counts from the receive time). Bounded in chunks, as the
// real latency stage's 1024-chunk buffer is, and in bytes, so a slow reader
// never makes the proxy buffer without bound.
const QUEUE_MAX_CHUNKS = 1024;
const QUEUE_MAX_BYTES = 4 * 1024 * 1024;

interface Run {
  readonly behaviour: ToxicBehaviour;
  readonly controller: AbortController;
}

interface StagePlace {
  spec: ToxicSpec;
  next: Stage | undefined;
  readonly memory: ToxicMemory;
}

interface Stage extends StagePlace {
  run: Run;
}

/** What a link needs from its connection. */
export interface LinkOwner {
  /** A toxic closes the connection (timeout, reset_peer, limit_data). */
  closeByToxic(link: Link, kind: CloseKind): void;
  readonly log: Logger;
}

/** One direction of a proxied connection with its own copy of that direction's toxics. */
export class Link {
  private readonly queue: Chunk[] = [];
  private queuedBytes = 0;
  private wake: (() => void) | undefined;
  private sourceEnded = false;
  private closed = false;
  private first: Stage | undefined;
  private readonly stages: Stage[] = [];

  constructor(
    private readonly source: Socket,
    readonly destination: Socket,
    private readonly owner: LinkOwner,
  ) {}

  /** Starts reading the source; `toxics` are this direction's toxics, in chain order. */
  start(toxics: readonly ToxicSpec[]): void {
    for (const spec of toxics) this.addToxic(spec);
    this.source.on('data', (data: Buffer) => this.onData(data));
    const ended = () => {
      this.sourceEnded = true;
      this.wake?.();
    };
    this.source.once('end', ended);
    this.source.once('close', ended);
    this.source.resume();
    void this.pump();
  }

  /** Bytes this link holds in memory: its input queue plus what the destination has not yet flushed. */
  bufferedBytes(): number {
    return this.queuedBytes + this.destination.writableLength;
  }

  /** Appends a toxic to the live chain (§5: attached immediately; the one before it restarts). */
  addToxic(spec: ToxicSpec): void {
    const place: StagePlace = { spec, next: undefined, memory: { transmitted: 0 } };
    const stage: Stage = Object.assign(place, { run: this.startRun(place) });
    const last = this.stages.at(-1);
    if (last) last.next = stage;
    else this.first = stage;
    this.stages.push(stage);
    stage.run.behaviour.start?.();
    if (last) this.restart(last);
  }

  /** Restarts a toxic with its new attributes and a new toxicity draw; limit_data keeps its count (§4). */
  updateToxic(spec: ToxicSpec): void {
    const stage = this.stages.find((s) => s.spec.name === spec.name);
    if (!stage) return;
    stage.spec = spec;
    this.restart(stage);
  }

  /** Unlinks a toxic; what it holds is passed on (§4), and a timeout toxic's removal closes the connection (§6.4). */
  removeToxic(name: string): void {
    const index = this.stages.findIndex((s) => s.spec.name === name);
    const stage = this.stages[index];
    if (!stage) return;
    const previous = this.stages[index - 1];
    if (previous) previous.next = stage.next;
    else this.first = stage.next;
    this.stages.splice(index, 1);
    stage.run.controller.abort();
    if (TOXICS[stage.spec.type].closesOnRemove) {
      this.owner.closeByToxic(this, 'fin');
      return;
    }
    // §5: the stage before a removed one is restarted (a new toxicity draw).
    if (previous) this.restart(previous);
  }

  /** Stops at once: no more reads, nothing more written, every toxic's timers cleared. */
  abort(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stage of this.stages) stage.run.controller.abort();
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.wake?.();
  }

  /** Ends this direction with a FIN to the destination after what was written is flushed, then closes it fully. */
  close(): void {
    if (this.closed) return;
    this.abort();
    // §3.2: a full close, not a half-close. The other link then sees its
    // source close and ends the connection's other side.
    this.destination.end(() => this.destination.destroy());
  }

  private startRun(place: StagePlace): Run {
    const { spec } = place;
    const controller = new AbortController();
    const context = {
      signal: controller.signal,
      // `next` is read when the chunk leaves, so a re-plumbed chain is followed.
      emit: (chunk: Chunk) => this.deliver(place.next, chunk),
      close: (kind: CloseKind) => {
        if (!controller.signal.aborted) this.owner.closeByToxic(this, kind);
      },
    };
    // §5: toxicity is drawn per link, each time the toxic starts on it.
    const acts = Math.random() < spec.toxicity;
    const behaviour = acts ? TOXICS[spec.type].create(spec.attributes, context, place.memory) : passThrough(context);
    return { behaviour, controller };
  }

  private restart(stage: Stage): void {
    // The old run keeps the chunk it holds and, now aborted, passes it on
    // at once; the next chunk goes to the new run.
    const old = stage.run;
    stage.run = this.startRun(stage);
    old.controller.abort();
    stage.run.behaviour.start?.();
  }

  private onData(data: Buffer): void {
    if (this.closed) return;
    this.queue.push({ data, receivedAtMs: performance.now() });
    this.queuedBytes += data.length;
    if (this.queue.length >= QUEUE_MAX_CHUNKS || this.queuedBytes >= QUEUE_MAX_BYTES) this.source.pause();
    this.wake?.();
  }

  private async take(): Promise<Chunk | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      const chunk = this.queue.shift();
      if (chunk) {
        this.queuedBytes -= chunk.data.length;
        const roomy = this.queue.length < QUEUE_MAX_CHUNKS / 2 && this.queuedBytes < QUEUE_MAX_BYTES / 2;
        if (roomy && this.source.isPaused() && !this.sourceEnded) this.source.resume();
        return chunk;
      }
      if (this.sourceEnded) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  private async pump(): Promise<void> {
    try {
      for (let chunk = await this.take(); chunk; chunk = await this.take()) {
        await this.deliver(this.first, chunk);
      }
      // EOF travels the chain too: slow_close holds it back.
      for (let stage = this.first; stage && !this.closed; stage = stage.next) await stage.run.behaviour.end?.();
      this.close();
    } catch (error) {
      this.owner.log.error({ err: error }, 'link failed');
      this.abort();
      this.destination.destroy();
    }
  }

  private async deliver(stage: Stage | undefined, chunk: Chunk): Promise<void> {
    if (this.closed) return;
    if (stage) {
      await stage.run.behaviour.chunk(chunk);
      return;
    }
    const destination = this.destination;
    if (destination.destroyed || destination.writableEnded) return;
    if (destination.write(chunk.data)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        destination.off('drain', done);
        destination.off('close', done);
        resolve();
      };
      destination.on('drain', done);
      destination.on('close', done);
    });
  }
}
