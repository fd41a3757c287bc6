// R1's request records, each with when its retention (R3) began, and V4's
// count of them per owner, kept together so that the count can never drift
// from the records: a record in, its owner's count up; a record out, down,
// and an owner with none left freed.
import type { RequestRecord } from './model.js';

/** A request record as the lease table holds it. */
export interface HeldRecord {
  readonly record: RequestRecord;
  /** When retention (R3) started counting: the grant, or the restart that reloaded it. */
  readonly sinceMs: number;
}

/** Request records by request id, counted per owner (V4's quota). */
export class RequestRecords {
  readonly #byId = new Map<string, HeldRecord>();
  /** Records per owner_id; an owner with none has no entry. */
  readonly #perOwner = new Map<string, number>();

  /** Records kept, in all. */
  get size(): number {
    return this.#byId.size;
  }

  /** Records kept of `ownerId`. */
  countOf(ownerId: string): number {
    return this.#perOwner.get(ownerId) ?? 0;
  }

  get(requestId: string): HeldRecord | undefined {
    return this.#byId.get(requestId);
  }

  /** Every record, by request id. */
  entries(): IterableIterator<[string, HeldRecord]> {
    return this.#byId.entries();
  }

  /** Records `held`, replacing (and uncounting) any record of the same id. */
  put(held: HeldRecord): void {
    this.drop(held.record.requestId);
    this.#byId.set(held.record.requestId, held);
    const owner = held.record.ownerId;
    this.#perOwner.set(owner, this.countOf(owner) + 1);
  }

  /** Forgets a record and its owner's count; an owner with none left is freed (V4). */
  drop(requestId: string): void {
    const held = this.#byId.get(requestId);
    if (!held) return;
    this.#byId.delete(requestId);
    const owner = held.record.ownerId;
    const left = this.countOf(owner) - 1;
    if (left > 0) this.#perOwner.set(owner, left);
    else this.#perOwner.delete(owner);
  }
}
