// F2 and F6: for each resource, checking the fence, checking result_id and
// committing the result are one critical section (no AdvanceFence or other
// Write of that resource interleaves), and no outcome is answered before
// everything it depends on is durable.
import { KeyedLock, unrecorded, type PhaseAttributes, type Phases } from '@fencer/common';
import { decideAdvance, decideWrite, type WritePolicy } from './fence-policy.js';
import type { JoinedBatch, ResultSummary, SinkStore, StoreOp } from './store.js';

/**
 * A validated Write (V1/V2 already checked): token > 0, ids well-formed.
 * `writer` is the caller's authenticated identity, null when auth is off (A5).
 */
export interface WriteCommand {
  readonly resource: string;
  readonly token: bigint;
  readonly resultId: string;
  readonly payload: Uint8Array;
  readonly writer: string | null;
}

/** A validated AdvanceFence: token > 0; `ownerId` is the holder the fence is granted to, null for none (A5). */
export interface AdvanceCommand {
  readonly resource: string;
  readonly token: bigint;
  readonly grantId: string;
  readonly ownerId: string | null;
}

/** The answer to a Write; `fence` is the resource's fence when it was decided. */
export type WriteOutcome =
  | { readonly kind: 'applied'; readonly fence: bigint }
  | { readonly kind: 'replayed'; readonly fence: bigint }
  | { readonly kind: 'stale'; readonly fence: bigint }
  | { readonly kind: 'not-issued'; readonly fence: bigint }
  | { readonly kind: 'owner-mismatch'; readonly fence: bigint }
  | { readonly kind: 'conflict'; readonly fence: bigint };

/** The answer to an AdvanceFence; on success `fence` equals the requested token. */
export type AdvanceOutcome =
  | { readonly kind: 'advanced'; readonly fence: bigint }
  | { readonly kind: 'retry-same-grant'; readonly fence: bigint }
  | { readonly kind: 'regression'; readonly fence: bigint };

/** The answer to a Read: only durable results are reported. */
export type ReadOutcome =
  { readonly kind: 'found'; readonly token: bigint; readonly payload: Uint8Array } | { readonly kind: 'not-found' };

interface Decided<T> {
  readonly outcome: T;
  /** Settles when every change this outcome made or observed is durable. */
  readonly durable: Promise<JoinedBatch | undefined>;
  /** The outcome made a change, so `durable` resolves with the batch it joined. */
  readonly wrote: boolean;
}

const describeOutcome = ({ outcome }: Decided<{ kind: string; fence: bigint }>): PhaseAttributes => ({
  'fencer.decision': outcome.kind,
  'fencer.fence': String(outcome.fence),
});

const describeBatch =
  (wrote: boolean) =>
  (joined: JoinedBatch | undefined): PhaseAttributes =>
    wrote && joined !== undefined
      ? { 'fencer.batch.joined': true, 'fencer.batch': joined.batch, 'fencer.batch.ops': joined.ops }
      : { 'fencer.batch.joined': false };

/**
 * The sink's commit path. Each method may be called concurrently (a unary
 * handler per call, or a stream handler per message); calls on one resource
 * are serialized, different resources run in parallel. Methods reject with
 * StoreFailedError when the store failed; they never answer an outcome whose
 * changes are not durable.
 */
export class SinkEngine {
  readonly #lock = new KeyedLock();

  /**
   * @param decide F1–F3's verdict on a Write. Production always uses
   * decideWrite; only a deliberately broken variant (the chaos suite's
   * negative controls) passes another, and F2 still holds around it.
   * @param phases records each call's lock wait, decision and group commit
   * (as trace spans); by default nothing.
   */
  constructor(
    private readonly store: SinkStore,
    private readonly decide: WritePolicy = decideWrite,
    private readonly phases: Phases = unrecorded,
  ) {}

  /**
   * Resources with a decision running or queued; 0 once idle, because
   * nothing is kept per resource or per write after it is decided.
   */
  get busyResources(): number {
    return this.#lock.activeKeys;
  }

  /** F1–F3, A5, F6: stores the result iff token == fence and the writer is its owner, idempotently on result_id. */
  write(command: WriteCommand): Promise<WriteOutcome> {
    return this.#serialized(command.resource, async (): Promise<Decided<WriteOutcome>> => {
      const current = await this.store.fence(command.resource);
      const fence = current?.fence ?? 0n;
      const existing = await this.store.result(command.resource, command.resultId);
      const decision = this.decide(current, existing, command);
      switch (decision.kind) {
        case 'apply': {
          const op: StoreOp = {
            kind: 'result',
            resource: command.resource,
            resultId: command.resultId,
            result: { token: command.token, payload: command.payload },
          };
          return { outcome: { kind: 'applied', fence }, durable: this.store.commit([op]), wrote: true };
        }
        case 'replayed':
        case 'conflict':
          // No change, but the stored result (or the fence) this answer
          // rests on may still be pending: a REPLAYED must survive a crash (S5).
          return { outcome: { kind: decision.kind, fence }, durable: this.store.settled(), wrote: false };
        case 'stale':
        case 'not-issued':
        case 'owner-mismatch':
          return {
            outcome: { kind: decision.kind, fence: decision.fence },
            durable: this.store.settled(),
            wrote: false,
          };
      }
    });
  }

  /** F4, F6: moves the fence up, or accepts the same grant's retry; answered once durable. */
  advanceFence(command: AdvanceCommand): Promise<AdvanceOutcome> {
    return this.#serialized(command.resource, async (): Promise<Decided<AdvanceOutcome>> => {
      const current = await this.store.fence(command.resource);
      const decision = decideAdvance(current, command);
      switch (decision.kind) {
        case 'advanced': {
          const op: StoreOp = {
            kind: 'fence',
            resource: command.resource,
            record: { fence: command.token, grantId: command.grantId, ownerId: command.ownerId },
          };
          return { outcome: { kind: 'advanced', fence: command.token }, durable: this.store.commit([op]), wrote: true };
        }
        case 'retry-same-grant':
          return {
            outcome: { kind: 'retry-same-grant', fence: command.token },
            durable: this.store.settled(),
            wrote: false,
          };
        case 'regression':
          return {
            outcome: { kind: 'regression', fence: decision.fence },
            durable: this.store.settled(),
            wrote: false,
          };
      }
    });
  }

  /** F3 Read: the durable result, or not_found. */
  async read(resource: string, resultId: string): Promise<ReadOutcome> {
    const result = await this.store.durableResult(resource, resultId);
    return result === undefined
      ? { kind: 'not-found' }
      : { kind: 'found', token: result.token, payload: result.payload };
  }

  /** The durable fence; 0n when the resource was never advanced. */
  async getFence(resource: string): Promise<bigint> {
    return (await this.store.durableFence(resource))?.fence ?? 0n;
  }

  /**
   * What an admin inspects (A4): the durable fence, the owner it is bound
   * to (A5; null for none) and the newest `limit` durable results.
   */
  async inspect(
    resource: string,
    limit: number,
  ): Promise<{ fence: bigint; ownerId: string | null; results: ResultSummary[] }> {
    const [record, results] = await Promise.all([
      this.store.durableFence(resource),
      this.store.durableResults(resource, limit),
    ]);
    return { fence: record?.fence ?? 0n, ownerId: record?.ownerId ?? null, results };
  }

  /**
   * Decides under the resource's lock, then releases the lock BEFORE the
   * fsync (pipelining) and waits for durability outside it. Safe because
   * the store makes a commit visible at once and syncs batches in FIFO
   * order: whatever a later decision saw pending is durable no later than
   * that decision's own batch. The wait is chained inside the lock, so the
   * outcomes of one resource settle in decision order, even within a batch.
   */
  async #serialized<T extends { kind: string; fence: bigint }>(
    resource: string,
    decide: () => Promise<Decided<T>>,
  ): Promise<T> {
    let locked!: () => void;
    void this.phases.run('lock wait', () => new Promise<void>((resolve) => (locked = resolve)));
    const { acked } = await this.#lock.run(resource, async () => {
      locked();
      const { outcome, durable, wrote } = await this.phases.run('decide', decide, describeOutcome);
      // Wrapped in an object so the lock does not wait for the fsync.
      return { acked: this.phases.run('group commit', () => durable, describeBatch(wrote)).then(() => outcome) };
    });
    return acked;
  }
}

/** What the gRPC layer (unary or streaming) needs from the engine. */
export type SinkApi = Pick<SinkEngine, 'write' | 'advanceFence' | 'read' | 'getFence' | 'inspect'>;
