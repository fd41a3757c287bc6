// One worker's hold on one resource, built only on @fencer/client: the
// steps both modes (commands on stdin, or the loop) are made of, each
// reporting what happened as events instead of throwing.
import * as grpc from '@grpc/grpc-js';
import { trace } from '@opentelemetry/api';
import {
  CoordinatorConnection,
  FencedWriter,
  FencerError,
  LeaseKeeper,
  ShardedSinks,
  SinkConnection,
  type CallObserver,
  type RetryPolicy,
  type TlsOptions,
} from '@fencer/client';
import { emit, eventClockMs } from './events.js';
import { inSpan } from './spans.js';

/** Who the worker is and where it works. */
export interface WorkerConfig {
  /** The coordinator's replicas (one address when it has none), in the order to try them (H7). */
  readonly coordinators: readonly string[];
  /** The sink, or every sink of a sharded deployment, as this worker reaches them; each call goes to the resource's owner (P3). */
  readonly sinks: readonly string[];
  readonly ownerId: string;
  readonly resource: string;
  readonly ttlMs: number;
  /** Bearer token; absent against `--insecure` services. */
  readonly token?: string;
  /** TLS to both services (a client certificate too under mutual TLS); absent: plaintext. */
  readonly tls?: TlsOptions;
  readonly callTimeoutMs: number;
  readonly retry?: RetryPolicy;
  /** Write results as unary Write calls instead of messages of the sink's WriteStream (SinkConnectionOptions.writeStream). */
  readonly unaryWrites?: boolean;
}

/** What a step ended with: its value, or the typed error already reported as a `refused` event. */
export type StepResult<T> = { ok: true; value: T } | { ok: false; error: FencerError };

/** A worker's connections and its current lease, if any. */
export class WorkerSession {
  readonly config: WorkerConfig;
  readonly #coordinator: CoordinatorConnection;
  readonly #sinks: ShardedSinks;
  #keeper: LeaseKeeper | undefined;
  #writer: FencedWriter | undefined;

  constructor(config: WorkerConfig) {
    this.config = config;
    let calls = 0;
    const observer: CallObserver = (call) => {
      const seq = ++calls;
      const sentAtMs = eventClockMs();
      const streamed = call.streamed ? { streamed: true as const } : {};
      emit({ event: 'sending', seq, method: call.method, ...streamed, request: printable(call.request), sentAtMs });
      return (outcome) =>
        emit({
          event: 'call',
          seq,
          method: call.method,
          ...streamed,
          request: printable(call.request),
          sentAtMs,
          doneAtMs: eventClockMs(),
          ...(outcome.ok
            ? { outcome: 'ok', response: printable(outcome.response) }
            : {
                outcome: outcome.error.reason,
                code: grpc.status[outcome.error.code] ?? String(outcome.error.code),
                retryable: outcome.error.retryable,
              }),
        });
    };
    const connection = {
      callTimeoutMs: config.callTimeoutMs,
      observer,
      ...(config.token === undefined ? {} : { token: config.token }),
      ...(config.tls === undefined ? {} : { tls: config.tls }),
    };
    this.#coordinator = new CoordinatorConnection({ coordinators: config.coordinators, ...connection });
    const writeStream = config.unaryWrites !== true;
    this.#sinks = new ShardedSinks(
      config.sinks.map((address) => new SinkConnection({ address, writeStream, ...connection })),
    );
  }

  /** The lease now held (possibly already lost: see its signal). */
  get keeper(): LeaseKeeper | undefined {
    return this.#keeper;
  }

  /**
   * Acquires the resource (one request id for all retries, R4) and starts
   * renewing it. `requestId` retries an earlier acquisition by hand, as a
   * worker that kept its request id across a crash would (R1).
   */
  async acquire(requestId?: string): Promise<StepResult<LeaseKeeper>> {
    return this.#step('acquire', async () => {
      const { resource, ownerId, ttlMs } = this.config;
      const keeper = await LeaseKeeper.acquire(this.#coordinator, {
        resource,
        ownerId,
        ttlMs,
        ...(requestId ? { requestId } : {}),
        ...(this.config.retry ? { retry: this.config.retry } : {}),
        onRenewed: (lease) =>
          emit({ event: 'renewed', resource, token: lease.token.toString(), remainingMs: lease.remainingMs }),
      });
      this.#keeper = keeper;
      this.#writer = new FencedWriter(this.#sinks, keeper, this.config.retry ? { retry: this.config.retry } : {});
      emit({
        event: 'acquired',
        resource,
        token: keeper.token.toString(),
        requestId: keeper.requestId,
        replayed: keeper.replayed,
        ...(keeper.sink ? { sink: keeper.sink.name } : {}),
      });
      const lost = () =>
        emit({
          event: 'lease-lost',
          resource,
          token: keeper.token.toString(),
          reason: (keeper.signal.reason as FencerError).reason,
        });
      // An answer slower than the TTL minus the keeper's margin leaves the
      // lease lost before Acquire returns: its signal has aborted already.
      if (keeper.signal.aborted) lost();
      else keeper.signal.addEventListener('abort', lost, { once: true });
      return keeper;
    });
  }

  /** Writes under the current lease, whether or not it is known lost: the sink decides (F1). */
  async write(resultId: string, payload: string): Promise<StepResult<void>> {
    return this.#step('write', async () => {
      if (!this.#writer) throw new Error('no lease was acquired yet');
      const receipt = await this.#writer.write(resultId, payload);
      emit({
        event: 'written',
        resource: this.config.resource,
        resultId,
        outcome: receipt.outcome,
        fence: receipt.fence.toString(),
      });
    });
  }

  /**
   * Writes once under a token of the caller's choosing, not its lease's: what
   * a buggy or hostile worker does. Only the sink's F1 check stands between
   * it and the results, which is what the chaos suite's negative controls show.
   */
  async forge(token: bigint, resultId: string, payload: string): Promise<StepResult<void>> {
    return this.#step('forge', async () => {
      const resource = this.config.resource;
      const sink = await this.#sink();
      const receipt = await sink.write({ resource, token, resultId, payload: Buffer.from(payload) });
      emit({ event: 'written', resource, resultId, outcome: receipt.outcome, fence: receipt.fence.toString() });
    });
  }

  /**
   * Renews the current lease once (L4), keeping its TTL, whether or not it
   * is known lost: the coordinator decides. The keeper's own renewals go on
   * beside it, and its local deadline does not move.
   */
  async renew(): Promise<StepResult<void>> {
    return this.#step('renew', async () => {
      if (!this.#keeper) throw new Error('no lease was acquired yet');
      const { resource, ownerId, incarnation, token } = this.#keeper;
      const lease = await this.#coordinator.renew({ resource, ownerId, incarnation, token, ttlMs: 0 });
      emit({ event: 'renewed', resource, token: lease.token.toString(), remainingMs: lease.remainingMs });
    });
  }

  /** Asks the sink for the resource's fence. */
  async getFence(): Promise<StepResult<void>> {
    return this.#step('get-fence', async () => {
      const fence = await (await this.#sink()).getFence(this.config.resource);
      emit({ event: 'fence', resource: this.config.resource, fence: fence.toString() });
    });
  }

  /** Reads a result back from the sink. */
  async read(resultId: string): Promise<StepResult<void>> {
    return this.#step('read', async () => {
      const stored = await (await this.#sink()).read(this.config.resource, resultId);
      emit({
        event: 'read',
        resource: this.config.resource,
        resultId,
        payload: stored.payload.toString(),
        token: stored.token.toString(),
      });
    });
  }

  /** Asks the coordinator who holds the resource now. */
  async describe(): Promise<StepResult<void>> {
    return this.#step('describe', async () => {
      const { lease, lastToken } = await this.#coordinator.describe(this.config.resource);
      emit({
        event: 'described',
        resource: this.config.resource,
        ...(lease ? { holder: lease.ownerId, token: lease.token.toString() } : {}),
        lastToken: lastToken.toString(),
      });
    });
  }

  /** Releases the current lease (L5). */
  async release(): Promise<StepResult<void>> {
    return this.#step('release', async () => {
      if (!this.#keeper) throw new Error('no lease was acquired yet');
      const released = await this.#keeper.release();
      emit({ event: 'released', resource: this.config.resource, released });
    });
  }

  /** Releases a lease still held (so a successor need not wait out its TTL), then closes the connections. */
  async close(): Promise<void> {
    if (this.#keeper && !this.#keeper.signal.aborted) await this.release();
    this.#coordinator.close();
    this.#sinks.close();
  }

  /** The connection to the sink that owns the resource: the one the lease names, or the one that has its fence (P3, P4). */
  #sink(): Promise<SinkConnection> {
    return this.#sinks.owner(this.config.resource, this.#keeper?.sink);
  }

  /** Runs one step as a span of its own (a refusal is an outcome, named in `fencer.refused`, not an error). */
  #step<T>(command: string, run: () => Promise<T>): Promise<StepResult<T>> {
    return inSpan(command, { 'fencer.resource': this.config.resource }, async () => {
      const result = await this.#reported(command, run);
      if (!result.ok) trace.getActiveSpan()?.setAttribute('fencer.refused', result.error.reason);
      return result;
    });
  }

  async #reported<T>(command: string, run: () => Promise<T>): Promise<StepResult<T>> {
    try {
      return { ok: true, value: await run() };
    } catch (error) {
      if (!(error instanceof FencerError)) {
        emit({ event: 'error', message: `${command}: ${(error as Error).message}` });
        throw error;
      }
      emit({
        event: 'refused',
        command,
        reason: error.reason,
        code: grpc.status[error.code] ?? String(error.code),
        message: error.message,
        details: error.details,
      });
      return { ok: false, error };
    }
  }
}

/** A request or response for a JSON line: bytes as UTF-8 text. */
function printable(message: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(message).map(([key, value]) => [key, Buffer.isBuffer(value) ? value.toString() : value]),
  );
}
