// An in-memory LeaseStore for unit tests and as the reference the LevelDB
// store is checked against (the shared contract suite runs on both).
import type { LeaseStore, StoredState } from '../core/store.js';
import type { Grant, RequestRecord } from '../core/model.js';

/** The "disk" a MemoryStore writes to; survives close() so tests can reopen it. */
export class MemoryMedium {
  readonly counters = new Map<string, bigint>();
  readonly grants = new Map<string, Grant>();
  readonly requests = new Map<string, RequestRecord>();
  /** Every write in order, for tests that check L3's ordering against other effects. */
  readonly journal: { op: 'reserve' | 'grant' | 'update' | 'delete'; key: string; durable: boolean }[] = [];
  /** When set, the next write rejects with this error (then it clears). */
  failNext: Error | null = null;
}

/** A LeaseStore over a MemoryMedium. Writes are instantly "durable"; a closed store rejects. */
export class MemoryStore implements LeaseStore {
  #open = true;

  constructor(readonly medium: MemoryMedium = new MemoryMedium()) {}

  async load(): Promise<StoredState> {
    this.#check();
    return {
      counters: new Map(this.medium.counters),
      grants: [...this.medium.grants.values()],
      requests: [...this.medium.requests.values()],
    };
  }

  async reserveToken(resource: string, token: bigint): Promise<void> {
    this.#write('reserve', resource, true);
    this.medium.counters.set(resource, token);
  }

  async recordGrant(grant: Grant, request: RequestRecord): Promise<void> {
    this.#write('grant', grant.resource, true);
    this.medium.grants.set(grant.resource, grant);
    this.medium.requests.set(request.requestId, request);
  }

  async updateGrant(grant: Grant): Promise<void> {
    this.#write('update', grant.resource, false);
    this.medium.grants.set(grant.resource, grant);
  }

  async deleteRequests(requestIds: readonly string[]): Promise<void> {
    this.#write('delete', requestIds.join(','), false);
    for (const id of requestIds) this.medium.requests.delete(id);
  }

  async close(): Promise<void> {
    this.#open = false;
  }

  #check(): void {
    if (!this.#open) throw new Error('store is closed');
  }

  #write(op: 'reserve' | 'grant' | 'update' | 'delete', key: string, durable: boolean): void {
    this.#check();
    const failure = this.medium.failNext;
    if (failure) {
      this.medium.failNext = null;
      throw failure;
    }
    this.medium.journal.push({ op, key, durable });
  }
}
