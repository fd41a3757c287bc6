// T3: the one error both services' stores fail with. After a durable write
// fails (disk full, I/O error) a store is failed for good: LevelDB's log
// after a failed append is not to be trusted (its writer drops the buffered
// bytes and goes on at the wrong offset, so every later record would be lost
// on recovery), and memory may hold changes the disk never got. Every
// pending and later call rejects with this, the service answers
// STORAGE_UNAVAILABLE and stops; a restart recovers from what was synced.

/** The store hit an I/O error (or is closed); nothing it holds in memory may be answered from. */
export class StoreFailedError extends Error {
  override name = 'StoreFailedError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * H3: a store write guarded by this replica's leadership found its election
 * key gone or won again by someone else, so nothing was written. It is the
 * `cause` of the StoreFailedError the store then fails with: a deposed
 * replica, told apart from a broken store.
 */
export class NotLeaderError extends Error {
  override name = 'NotLeaderError';
}
