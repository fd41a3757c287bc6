// The durable-state port of the coordinator. What must survive a crash is
// the per-resource token counter (L6), each grant together with its request
// record (L3 step 3, R1) and the latest grant per resource with its current
// TTL (L7); everything else, expiry included, is rebuilt in memory at start-up
// and, for a resource whose entry left memory (V4), when it is next touched.
import type { StoreFailedError } from '@fencer/common';
import type { Grant, RequestRecord } from './model.js';

/** Everything a store holds, as read once at start-up. */
export interface StoredState {
  /** Per resource, at or above the highest token ever reserved (L6); never lower than any granted token. */
  readonly counters: ReadonlyMap<string, bigint>;
  /** The latest grant per resource, released/fenced or not. */
  readonly grants: readonly Grant[];
  /** Request records not yet collected (R3). */
  readonly requests: readonly RequestRecord[];
}

/** One resource's durable state, read back when its entry is needed in memory again (V4). */
export interface StoredResource {
  /** Highest token ever reserved for it (L6); 0n only if a grant was stored without one (a store bug). */
  readonly counter: bigint;
  /** Its latest grant, released/fenced or not; null if every token reserved for it was burned. */
  readonly grant: Grant | null;
}

/**
 * Durable coordinator state. Each method is one atomic write; the ones
 * marked durable resolve only once the write is synced to stable storage.
 * The core serializes the writes of one resource and of one request id, so
 * an implementation need not order concurrent calls on different keys.
 * Key-value shaped on purpose (one key per counter, grant and request), so
 * an etcd- or Raft-backed store can replace LevelDB without touching core/.
 * Fail-stop (T3): the first I/O failure fails the store for good; that
 * call and every pending and later one reject with StoreFailedError, and
 * `whenFailed` resolves. The core then changes no in-memory state and
 * answers nothing more, and the process stops.
 */
export interface LeaseStore {
  /** Reads the whole state (called once, before serving). */
  load(): Promise<StoredState>;
  /**
   * Reads one resource's counter and latest grant, as `load` would have;
   * undefined if neither was ever stored. Sees every write that has resolved.
   */
  loadResource(resource: string): Promise<StoredResource | undefined>;
  /**
   * Durable: once it resolves, the resource's counter is at least `token`
   * (L3 step 1, L6). A store may reserve more than asked (a block, so most
   * reservations write nothing); the counter it loads back is then above
   * every token reserved, never below. Callers only ever raise it.
   */
  reserveToken(resource: string, token: bigint): Promise<void>;
  /** Durable, one atomic batch: the grant becomes the resource's latest and the request is recorded (L3 step 3). */
  recordGrant(grant: Grant, request: RequestRecord): Promise<void>;
  /**
   * Durable: replaces the resource's latest grant with the same grant under
   * a new TTL (L4). Synced because L7 restores the stored TTL: a lost update
   * could bring back a shorter one and cut the holder short.
   */
  changeTtl(grant: Grant): Promise<void>;
  /**
   * Not necessarily durable: replaces the resource's latest grant with its
   * released (L5) or fenced (L8) version. A lost update only makes L7 keep
   * that grant valid one TTL longer, and an ended grant is never revived.
   */
  endGrant(grant: Grant): Promise<void>;
  /**
   * Durable: records `names`, the sinks the coordinator fronts, unless a set
   * was recorded before (P2); resolves with the set recorded, sorted: `names`
   * on a first start, else the earlier set, which the caller compares. Atomic
   * (put if absent): of two first starts at once, one set wins.
   */
  claimSinkNames(names: readonly string[]): Promise<readonly string[]>;
  /** Not necessarily durable: drops collected request records (R3); lost deletes are redone after a restart. */
  deleteRequests(requestIds: readonly string[]): Promise<void>;
  /** Resolves with the cause once the store has failed (T3); never rejects. */
  whenFailed(): Promise<StoreFailedError>;
  /** Releases files and locks; further calls reject. */
  close(): Promise<void>;
}
