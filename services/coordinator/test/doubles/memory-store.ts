// An in-memory LeaseStore for unit tests and as the reference the LevelDB
// store is checked against (the shared contract suite runs on both). Its
// disk can simulate power loss, so tests can tell synced from unsynced writes.
import { StoreFailedError } from '@fencer/common';
import type { LeaseStore, StoredResource, StoredState } from '../../src/core/store.js';
import type { Grant, RequestRecord } from '../../src/core/model.js';

type WriteOp = 'reserve' | 'grant' | 'ttl' | 'end' | 'delete' | 'sinks';

/**
 * The "disk" a MemoryStore writes to; survives close() so tests can reopen
 * it. The maps are what a reader sees now (LevelDB's page cache); `crash()`
 * drops everything not yet synced.
 */
export class MemoryDisk {
  readonly counters = new Map<string, bigint>();
  readonly grants = new Map<string, Grant>();
  readonly requests = new Map<string, RequestRecord>();
  /** The sink names recorded at first start (P2); always written synced, so a crash keeps them. */
  sinkNames: readonly string[] | undefined;
  /** Every write in order, for tests that check L3's ordering and what is synced. */
  readonly journal: { op: WriteOp; key: string; durable: boolean }[] = [];
  /** When set, the next write fails with this cause, and the store that made it is failed for good (T3). */
  failNext: Error | null = null;
  #synced = {
    counters: new Map<string, bigint>(),
    grants: new Map<string, Grant>(),
    requests: new Map<string, RequestRecord>(),
  };

  /**
   * Power loss: every write since the last synced one is lost. Like
   * LevelDB's log, a synced write makes every earlier write durable too.
   */
  crash(): void {
    replace(this.counters, this.#synced.counters);
    replace(this.grants, this.#synced.grants);
    replace(this.requests, this.#synced.requests);
  }

  /** Called by the store after applying a write: a synced one makes the current state durable. */
  sync(): void {
    this.#synced = { counters: new Map(this.counters), grants: new Map(this.grants), requests: new Map(this.requests) };
  }
}

/**
 * A LeaseStore over a MemoryDisk. Writes marked durable in LeaseStore are
 * synced; a closed store rejects; a failed write fails it for good (T3).
 */
export class MemoryStore implements LeaseStore {
  #open = true;
  #failure: StoreFailedError | undefined;
  #reportFailure!: (failure: StoreFailedError) => void;
  readonly #failed = new Promise<StoreFailedError>((resolve) => (this.#reportFailure = resolve));

  constructor(readonly disk: MemoryDisk = new MemoryDisk()) {}

  async load(): Promise<StoredState> {
    this.#check();
    return {
      counters: new Map(this.disk.counters),
      grants: [...this.disk.grants.values()],
      requests: [...this.disk.requests.values()],
    };
  }

  async loadResource(resource: string): Promise<StoredResource | undefined> {
    this.#check();
    const counter = this.disk.counters.get(resource);
    const grant = this.disk.grants.get(resource);
    if (counter === undefined && grant === undefined) return undefined;
    return { counter: counter ?? 0n, grant: grant ?? null };
  }

  async reserveToken(resource: string, token: bigint): Promise<void> {
    this.#write('reserve', resource, true, () => this.disk.counters.set(resource, token));
  }

  async recordGrant(grant: Grant, request: RequestRecord): Promise<void> {
    this.#write('grant', grant.resource, true, () => {
      this.disk.grants.set(grant.resource, grant);
      this.disk.requests.set(request.requestId, request);
    });
  }

  async changeTtl(grant: Grant): Promise<void> {
    this.#write('ttl', grant.resource, true, () => this.disk.grants.set(grant.resource, grant));
  }

  async endGrant(grant: Grant): Promise<void> {
    this.#write('end', grant.resource, false, () => this.disk.grants.set(grant.resource, grant));
  }

  async claimSinkNames(names: readonly string[]): Promise<readonly string[]> {
    this.#check();
    if (this.disk.sinkNames === undefined) {
      const sorted = [...names].sort();
      this.#write('sinks', 'sinks', true, () => (this.disk.sinkNames = sorted));
    }
    return this.disk.sinkNames!;
  }

  async deleteRequests(requestIds: readonly string[]): Promise<void> {
    this.#write('delete', requestIds.join(','), false, () => {
      for (const id of requestIds) this.disk.requests.delete(id);
    });
  }

  whenFailed(): Promise<StoreFailedError> {
    return this.#failed;
  }

  async close(): Promise<void> {
    this.#open = false;
  }

  #check(): void {
    if (this.#failure) throw this.#failure;
    if (!this.#open) throw new StoreFailedError('store is closed');
  }

  #write(op: WriteOp, key: string, durable: boolean, apply: () => void): void {
    this.#check();
    const cause = this.disk.failNext;
    if (cause) {
      this.disk.failNext = null;
      this.#failure = new StoreFailedError(`storage failed: ${cause.message}`, { cause });
      this.#reportFailure(this.#failure);
      throw this.#failure;
    }
    apply();
    this.disk.journal.push({ op, key, durable });
    if (durable) this.disk.sync();
  }
}

function replace<K, V>(target: Map<K, V>, source: ReadonlyMap<K, V>): void {
  target.clear();
  for (const [key, value] of source) target.set(key, value);
}
