// What a `fencer worker --mix` does next: a seeded generator of operations
// (Jepsen's generator: it says what to do next, never does it, and knows
// nothing of faults or checking), drawn from a named mix of Acquire, Renew,
// Release, Write, Read and GetFence. The mixes exist so that every safety
// invariant the chaos checker judges (PROTOCOL.md S1–S6) has a chance to
// break: result ids that successive holders of a resource contend for (S4,
// S6), writes retried with the same or another payload (F3, S5, S6),
// acquisitions retried under their request id (R1, S2), and writes sent
// after a pause past the TTL with the old token, which only the sink's fence
// can refuse (F1, S3), and two writes of one result id with different
// payloads sent at once, which the sink must order (F2: one is applied, the
// other a RESULT_CONFLICT; a sink that checks and stores in two steps lets
// both through, S5, S6).
import { prng } from '@fencer/common';

/** What a worker holding a lease may do next. */
export type HoldingStep = 'write' | 'read' | 'getFence' | 'renew' | 'release';
/** What a worker without a lease may do next; its writes and renewals carry the last token it held. */
export type IdleStep = 'acquire' | 'reacquire' | 'write' | 'read' | 'getFence' | 'renew';

/** A mix: relative weights of the next step, and the shares that shape writes. Shares are in [0, 1]. */
export interface Mix {
  /** One line for `--help`. */
  readonly description: string;
  readonly holding: Readonly<Record<HoldingStep, number>>;
  readonly idle: Readonly<Record<IdleStep, number>>;
  /** Of the writes: the share to a result id that successive holders of the resource share. */
  readonly contended: number;
  /** Of the writes: the share that re-send the previous write's result id, half with its payload and half with another. */
  readonly retried: number;
  /** Of a holder's writes: the share sent after a pause past the TTL. */
  readonly paused: number;
  /** Of a holder's writes: the share sent together with a second write of their result id, with another payload. */
  readonly twinned: number;
}

/** The named mixes. */
export const MIXES = Object.freeze({
  default: {
    description:
      'every call and every rule the checker judges: contended and retried result ids, retried acquisitions, reads, stale writes after pauses past the TTL',
    holding: { write: 10, read: 2, getFence: 1, renew: 1, release: 2 },
    idle: { acquire: 10, reacquire: 1, write: 1, read: 1, getFence: 1, renew: 1 },
    contended: 0.3,
    retried: 0.2,
    paused: 0.05,
    twinned: 0.05,
  },
  contended: {
    description:
      'short holds whose writes mostly go to result ids the previous holders wrote, often retried, some twinned (two payloads at once)',
    holding: { write: 10, read: 2, getFence: 1, renew: 1, release: 4 },
    idle: { acquire: 10, reacquire: 1, write: 1, read: 2, getFence: 1, renew: 1 },
    contended: 0.8,
    retried: 0.3,
    paused: 0.03,
    twinned: 0.2,
  },
  stale: {
    description:
      'fresh result ids only, often written after a pause past the TTL or once the lease is known lost: each stale write is a new result that only the fence can refuse',
    holding: { write: 10, read: 1, getFence: 1, renew: 1, release: 2 },
    idle: { acquire: 10, reacquire: 1, write: 3, read: 1, getFence: 1, renew: 1 },
    contended: 0,
    retried: 0,
    paused: 0.2,
    twinned: 0,
  },
} satisfies Record<string, Mix>);

/** A mix's name. */
export type MixName = keyof typeof MIXES;

/** One operation to run next. */
export type Step =
  /** A new acquisition, with a fresh request id (R4). */
  | { readonly kind: 'acquire' }
  /** The last acquisition again, under its request id (R1). */
  | { readonly kind: 'reacquire' }
  | { readonly kind: 'renew' }
  | { readonly kind: 'release' }
  /**
   * Under the last lease's token, after stopping the whole process for
   * `pauseMs` (0: at once); with `twin`, a second write of the result id
   * with that payload is sent at the same moment.
   */
  | {
      readonly kind: 'write';
      readonly resultId: string;
      readonly payload: string;
      readonly pauseMs: number;
      readonly twin?: string;
    }
  | { readonly kind: 'read'; readonly resultId: string }
  | { readonly kind: 'get-fence' };

// Contended result ids are named after the token divided by this span, so
// the holders of a few successive tokens of a resource share them, and
// later holders get fresh ones to race for.
const CONTENDED_SPAN = 4n;
// ...and this many of them per span.
const CONTENDED_IDS = 3;
// Result ids recently written, kept to read back.
const REMEMBERED = 16;

/**
 * A seeded generator of one worker's steps: the same mix, seed and owner,
 * given the same answers (whether a lease is held, its token), yield the
 * same steps. Result ids and payloads name the owner, so two workers never
 * send the same payload.
 */
export class OperationGenerator {
  readonly #mix: Mix;
  readonly #owner: string;
  readonly #ttlMs: number;
  readonly #random: ReturnType<typeof prng>;
  #writes = 0;
  #acquired = false;
  #last: { readonly resultId: string; readonly payload: string } | undefined;
  readonly #written: string[] = [];

  /** `ttlMs` is the lease TTL the worker asks for: pauses last 1.5 to 2.5 times it. */
  constructor(mix: Mix, options: { readonly seed: number; readonly owner: string; readonly ttlMs: number }) {
    this.#mix = mix;
    this.#owner = options.owner;
    this.#ttlMs = options.ttlMs;
    this.#random = prng(options.seed);
  }

  /**
   * The next step of a worker that holds a lease (`holding`) or not, whose
   * last lease had `token` (undefined before its first). Without a token
   * there is nothing to write or renew under, and nothing to retry before
   * a first acquisition.
   */
  next(holding: boolean, token: bigint | undefined): Step {
    const kind = holding
      ? this.#pick(this.#mix.holding)
      : this.#pick(this.#mix.idle, (step) =>
          step === 'write' || step === 'renew' ? token !== undefined : step !== 'reacquire' || this.#acquired,
        );
    switch (kind) {
      case 'acquire':
      case 'reacquire':
        this.#acquired = true;
        return { kind };
      case 'renew':
      case 'release':
        return { kind };
      case 'getFence':
        return { kind: 'get-fence' };
      case 'read':
        return { kind: 'read', resultId: this.#readable(token) };
      case 'write':
        return this.#write(token!, holding);
    }
  }

  #write(token: bigint, holding: boolean): Step {
    const n = ++this.#writes;
    const payload = `${this.#owner}@${token}#${n}`;
    // Drawn only by mixes that twin, so the others' steps stay what their seeds gave before.
    const twinned = holding && this.#mix.twinned > 0 && this.#random.next() < this.#mix.twinned;
    const draw = this.#random.next();
    // A twin goes to a fresh result id: under one already written, both would only be refused or replayed.
    const write = twinned
      ? { resultId: `${this.#owner}-${token}-${n}`, payload }
      : this.#last && draw < this.#mix.retried
        ? { resultId: this.#last.resultId, payload: this.#random.next() < 0.5 ? this.#last.payload : payload }
        : {
            resultId:
              draw < this.#mix.retried + this.#mix.contended ? this.#contended(token) : `${this.#owner}-${token}-${n}`,
            payload,
          };
    this.#last = write;
    if (!this.#written.includes(write.resultId)) this.#written.push(write.resultId);
    if (this.#written.length > REMEMBERED) this.#written.shift();
    const pauseMs =
      holding && this.#random.next() < this.#mix.paused ? Math.round(this.#ttlMs * (1.5 + this.#random.next())) : 0;
    return { kind: 'write', ...write, pauseMs, ...(twinned ? { twin: `${payload}'` } : {}) };
  }

  /** A contended result id of `token`'s span. */
  #contended(token: bigint): string {
    return `c${token / CONTENDED_SPAN}-${this.#random.int(1, CONTENDED_IDS)}`;
  }

  /** A result id to read: one written lately, or a contended one (perhaps never written: RESULT_NOT_FOUND). */
  #readable(token: bigint | undefined): string {
    if (this.#written.length > 0 && (token === undefined || this.#random.next() < 0.7))
      return this.#random.pick(this.#written);
    return this.#contended(token ?? 0n);
  }

  /** A key drawn in proportion to its weight among those `allowed`. */
  #pick<K extends string>(weights: Readonly<Record<K, number>>, allowed: (key: K) => boolean = () => true): K {
    const entries = (Object.entries(weights) as [K, number][]).filter(([key, weight]) => weight > 0 && allowed(key));
    let draw = this.#random.next() * entries.reduce((sum, [, weight]) => sum + weight, 0);
    for (const [key, weight] of entries) {
      draw -= weight;
      if (draw < 0) return key;
    }
    return entries.at(-1)![0];
  }
}
