// Which coordinator replica to ask (H7): the one believed to lead, then the
// leader a NOT_LEADER names, or the next address. Kept apart from the
// connection so that any caller of the Coordinator service (the CLI's admin
// commands among them) walks the replicas the same way.
import { NotLeaderError, UnavailableError, type FencerError } from './errors.js';

/** How one walk over the replicas is bounded: a deadline over all attempts, and a signal that ends it. */
export interface WalkOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Sends each call to the replica believed to lead (at first, the first
 * address). Refused with NOT_LEADER, the call goes on at once to the leader
 * the refusal names, or to the next address when it names none (or one
 * already asked); unable to reach a replica (UNAVAILABLE without a reason, a
 * deadline, STORAGE_UNAVAILABLE), it goes on to the next address. Every
 * replica is asked at most once per call, within `timeoutMs` over all of
 * them; when none answers, the last error is thrown (retryable: the caller's
 * backoff decides when to walk again). A refusal from the leader itself
 * (SINK_UNAVAILABLE among them: its sink, not the leader, is down) is thrown
 * as it is.
 */
export class LeaderRouter {
  /** The configured replicas, in order. */
  readonly coordinators: readonly string[];
  #leader: string;

  /** Throws RangeError for an empty list or an address listed twice. */
  constructor(coordinators: readonly string[]) {
    if (coordinators.length === 0) throw new RangeError('coordinators: give at least one HOST:PORT');
    const twice = coordinators.find((address, index) => coordinators.indexOf(address) !== index);
    if (twice !== undefined) throw new RangeError(`coordinators: ${twice} is listed twice`);
    this.coordinators = Object.freeze([...coordinators]);
    this.#leader = coordinators[0]!;
  }

  /** The replica the next call goes to first: the last one that answered, or that a NOT_LEADER named. */
  get leader(): string {
    return this.#leader;
  }

  /**
   * Runs `attempt` against one replica after another, as above. `attempt`
   * gets the address and the time left of the walk (Infinity when
   * unbounded), and must reject with a FencerError.
   */
  async call<T>(attempt: (address: string, leftMs: number) => Promise<T>, options: WalkOptions = {}): Promise<T> {
    const startedMs = performance.now();
    const leftMs = () => (options.timeoutMs ?? Infinity) - (performance.now() - startedMs);
    const asked = new Set<string>();
    for (let address = this.#leader; ;) {
      asked.add(address);
      try {
        const result = await attempt(address, leftMs());
        this.#leader = address;
        return result;
      } catch (error) {
        const next = this.#nextReplica(address, error as FencerError, asked);
        if (next === undefined || options.signal?.aborted || leftMs() <= 0) throw error;
        address = next;
      }
    }
  }

  /**
   * Where to go after `address` failed with `error`: the leader a NOT_LEADER
   * names, else the next configured replica not yet asked in this walk;
   * undefined when the error is the leader's own answer or every replica was
   * asked. Moves the believed leader on either way, so the caller's retry
   * starts from a replica that may lead.
   */
  #nextReplica(address: string, error: FencerError, asked: ReadonlySet<string>): string | undefined {
    if (!(error instanceof UnavailableError) || error.reason === 'SINK_UNAVAILABLE') return undefined;
    // A leader already asked in this walk is not believed: a standby names
    // the old leader until the election key lapses (H2), however dead it is.
    const named = error instanceof NotLeaderError ? error.leader : undefined;
    if (named !== undefined && !asked.has(named)) {
      this.#leader = named;
      return named;
    }
    const from = this.coordinators.indexOf(address);
    const order = this.coordinators.map((_, i) => this.coordinators[(from + 1 + i) % this.coordinators.length]!);
    const next = order.find((candidate) => !asked.has(candidate));
    if (this.#leader === address) this.#leader = next ?? order[0]!;
    return next;
  }
}
