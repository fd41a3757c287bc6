// Writing under a lease: every write carries the lease's token, and the
// sink alone decides whether that token is still the fence (F1). A write
// whose reply was lost is retried with the same result id, which F3 makes
// safe (the same payload is REPLAYED, never stored twice); once the lease is
// known lost nothing is retried, because a retry could only be refused or,
// worse, be the first copy to land after a successor's writes.
import { FencerError, LeaseLostError, toFencerError } from './errors.js';
import type { WriteReceipt } from './calls.js';
import type { SinkConnection } from './connection.js';
import { ShardedSinks } from './sinks.js';
import type { WriteFields } from './write-stream.js';
import type { FencingLease } from './lease-keeper.js';
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from './retry.js';

/** How a FencedWriter sends and retries. */
export interface FencedWriterOptions {
  /** Spacing and number of retries of transient failures (UNAVAILABLE, DEADLINE_EXCEEDED). */
  readonly retry?: RetryPolicy;
}

/**
 * Writes results under one lease. `write` resolves with the sink's receipt
 * or rejects with a typed error: LeaseLostError (STALE_TOKEN,
 * TOKEN_NOT_ISSUED; the lease is then abandoned), ResultConflictError (this
 * result id holds another payload), or UnavailableError when the write's
 * fate is unknown (retries ran out, or the lease was lost meanwhile): read
 * the result id back to learn whether it landed.
 */
export class FencedWriter {
  readonly #send: (request: WriteFields) => Promise<WriteReceipt>;
  readonly #lease: FencingLease;
  readonly #retry: RetryPolicy;

  /** `sink`: the one sink, or sharded sinks, of which it writes to the lease's (P3). */
  constructor(sink: SinkConnection | ShardedSinks, lease: FencingLease, options: FencedWriterOptions = {}) {
    // The connection sends it as a WriteStream message or a unary Write (SinkConnectionOptions.writeStream):
    // either way a write left unanswered is retried with the same result id, as F3 makes safe.
    this.#send = async (request) =>
      (sink instanceof ShardedSinks ? await sink.owner(lease.resource, lease.sink) : sink).write(request);
    this.#lease = lease;
    this.#retry = options.retry ?? DEFAULT_RETRY_POLICY;
  }

  /**
   * Stores `payload` under `resultId` (which should name the work, such as
   * task and step, not the attempt) with the lease's token. The first
   * attempt is always sent, even if the lease is known lost: the sink's
   * answer is the authoritative one (F5: with no successor it still accepts).
   */
  async write(resultId: string, payload: Uint8Array | string): Promise<WriteReceipt> {
    const request = {
      resource: this.#lease.resource,
      token: this.#lease.token,
      resultId,
      payload: typeof payload === 'string' ? Buffer.from(payload) : payload,
    };
    const lost = this.#lease.signal;
    try {
      return await withRetries(this.#retry, () => this.#send(request), {
        shouldRetry: (error) => error instanceof FencerError && error.retryable && !lost?.aborted,
        ...(lost ? { signal: lost } : {}),
      });
    } catch (raw) {
      const error = toFencerError(raw);
      if (error instanceof LeaseLostError) this.#lease.abandon?.(error);
      throw error;
    }
  }
}
