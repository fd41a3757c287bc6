// H2: a replica serves only while it holds the election on <prefix>leader AND
// its leadership is confirmed: within its leader lease, measured on its own
// monotonic clock from the moment it SENT its last keepalive that etcd
// answered, and shorter than etcd's session TTL by a margin. So a leader
// that etcd has given up on (paused, cut off, etcd down) has stopped
// confirming before etcd deletes its key and lets another replica win.
//
// The election is one etcd key, written in a transaction only if it does not
// exist, with this replica's own etcd lease (the session) and its advertised
// address as the value. The session is kept alive by a loop of our own, one
// keepalive at a time, each on its own stream so its answer is its own: the
// etcd3 library's `lost` event fires only about 2×TTL after the last
// keepalive, while etcd expires the lease at 1×TTL. Each round also reads
// the key back, so a key deleted or won again by someone else (an operator,
// a lease etcd revoked) deposes this replica even while keepalives succeed.
//
// Standbys read the key every round: that is how they learn the leader's
// address (for NOT_LEADER's `leader`) and when the key is free to campaign.
import { Buffer } from 'node:buffer';
import { setTimeout as sleep } from 'node:timers/promises';
import { EtcdLeaseInvalidError, type Etcd3, type Lease } from 'etcd3';
import type { Clock } from '@fencer/common';
import type { Logger } from '@fencer/server-kit';
import { LEADER_KEY, type LeadershipGuard } from './etcd-store.js';

/**
 * The leader lease as a fraction of the session TTL. The margin below 1 is
 * 1/5 for what happens between a gate's check and the reply it guards
 * (scheduling, a GC pause), plus 1/20 for clock rates: this replica's
 * monotonic clock running up to 5 % slower than etcd's leader's over a TTL.
 */
export const LEADER_LEASE_FRACTION = 1 - 1 / 5 - 1 / 20;

/** Keepalives (and standby reads) per session TTL: three chances to confirm within one leader lease. */
const ROUNDS_PER_TTL = 4;

/**
 * How often a standby reads the election key, at most: a failover takes the
 * dead leader's session TTL plus up to this (plus etcd's own expiry sweep,
 * every 500 ms), so it stays short at long TTLs too.
 */
const STANDBY_POLL_MS = 250;

/** Why a replica stopped leading. */
export type DepositionReason =
  /** etcd says the session lease is gone (expired or revoked): someone else may lead already. */
  | 'session-lost'
  /** The election key is gone or was won again by another session (H3). */
  | 'key-lost'
  /** No keepalive was answered within the leader lease (H2, H6). */
  | 'leader-lease-expired'
  /** The composition gave up the term (its store failed, or the replica is stopping). */
  | 'resigned';

export interface LeadershipOptions {
  /** A client the caller owns (stop() does not close it). */
  readonly client: Etcd3;
  /** The keys' prefix, ending in '/' (--etcd-prefix); the election key is `<prefix>leader`. */
  readonly prefix: string;
  /** This replica's address for clients (--advertise): the election key's value while it leads. */
  readonly advertise: string;
  /** Session TTL in ms (--leader-ttl-ms); etcd grants whole seconds, at least this. */
  readonly ttlMs: number;
  /** This replica's monotonic clock (L1): the leader lease is measured on it. */
  readonly clock: Clock;
  readonly log: Logger;
  /** Called once per won election, with the guard its store writes compare (H3). */
  readonly onElected: (guard: LeadershipGuard) => void;
  /** Called once when the leadership `onElected` announced ends, whatever the reason. */
  readonly onDeposed: (reason: DepositionReason) => void;
}

interface Term {
  readonly lease: Lease;
  /** The session's lease id (decimal), as keys written with it report it. */
  readonly leaseId: string;
  readonly guard: LeadershipGuard;
  /** Clock time until which the leadership is confirmed: send time of the last answered keepalive + leader lease. */
  confirmedUntilMs: number;
}

/**
 * One replica's part in the election: campaigns until it wins, keeps its
 * session alive while it leads, campaigns again when deposed. Never throws
 * for etcd failures: it logs them and keeps trying (H6: it resumes by
 * itself when etcd is back).
 */
export class EtcdLeadership {
  readonly #options: LeadershipOptions;
  readonly #key: string;
  readonly #roundMs: number;
  readonly #leaderLeaseMs: number;
  #term: Term | undefined;
  /** The leader's advertised address as last read from the key (own address while leading). */
  #leaderAddress: string | undefined;
  /** Sessions this replica gave up but could not revoke yet (etcd unreachable), by lease id: revoked before campaigning. */
  readonly #abandoned = new Map<Lease, string>();
  readonly #stopping = new AbortController();
  readonly #loop: Promise<void>;
  /** Failures are logged once per kind until a round succeeds, not once per round. */
  #lastFailure: string | undefined;

  private constructor(options: LeadershipOptions) {
    if (!(options.ttlMs >= 1)) throw new RangeError(`leader TTL must be a positive number of ms, got ${options.ttlMs}`);
    this.#options = options;
    this.#key = `${options.prefix}${LEADER_KEY}`;
    this.#roundMs = Math.max(50, Math.floor(options.ttlMs / ROUNDS_PER_TTL));
    this.#leaderLeaseMs = Math.floor(options.ttlMs * LEADER_LEASE_FRACTION);
    this.#loop = this.#run();
  }

  /** Starts campaigning at once. */
  static start(options: LeadershipOptions): EtcdLeadership {
    return new EtcdLeadership(options);
  }

  /** The election key, `<prefix>leader`. */
  get key(): string {
    return this.#key;
  }

  /** The leader lease in ms of the clock: a confirmation lasts this long from its keepalive's send time. */
  get leaderLeaseMs(): number {
    return this.#leaderLeaseMs;
  }

  /** H2: this replica leads and its leader lease has not run out on its clock. */
  isConfirmed(): boolean {
    const term = this.#term;
    return term !== undefined && this.#options.clock.nowMs() < term.confirmedUntilMs;
  }

  /** Clock time until which the current leadership is confirmed; undefined when not leading. */
  confirmedUntilMs(): number | undefined {
    return this.#term?.confirmedUntilMs;
  }

  /** The current leadership's guard (H3); undefined when not leading. */
  guard(): LeadershipGuard | undefined {
    return this.#term?.guard;
  }

  /**
   * The leader's advertised address as last seen, this replica's own while it
   * leads confirmed; undefined when unknown, and while this replica's own
   * leadership is unconfirmed (another may have won: it cannot name one).
   */
  leaderAddress(): string | undefined {
    if (this.#term && !this.isConfirmed()) return undefined;
    return this.#leaderAddress;
  }

  /**
   * Gives up the current leadership, if it is still `guard`'s (a later one
   * is left alone): its session is revoked so another replica can win at
   * once, and this one campaigns again. For a term whose store failed.
   */
  resign(guard: LeadershipGuard): void {
    if (this.#term?.guard === guard) this.#depose('resigned');
  }

  /** Stops campaigning and gives up the leadership (revoking the session, bounded). Idempotent. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#loop;
    if (this.#term) this.#depose('resigned');
    await this.#revokeAbandoned();
  }

  async #run(): Promise<void> {
    const signal = this.#stopping.signal;
    while (!signal.aborted) {
      const startedMs = this.#options.clock.nowMs();
      if (this.#term) await this.#confirm(this.#term);
      else await this.#campaign();
      // One round per period from its start, so a slow round does not stretch the period.
      const periodMs = this.#term ? this.#roundMs : Math.min(this.#roundMs, STANDBY_POLL_MS);
      const waitMs = periodMs - (this.#options.clock.nowMs() - startedMs);
      try {
        await sleep(Math.max(this.#term ? 0 : 10, Math.min(periodMs, waitMs)), undefined, { signal });
      } catch {
        // stopped
      }
    }
  }

  /** One leader round: a keepalive sent now, answered, extends the leader lease from now (H2). */
  async #confirm(term: Term): Promise<void> {
    const sentMs = this.#options.clock.nowMs();
    try {
      const [answer, kv] = await Promise.all([
        this.#bounded(term.lease.keepaliveOnce(this.#callOptions())),
        this.#bounded(this.#options.client.get(this.#key).options(this.#callOptions()).exec()),
      ]);
      if (this.#term !== term) return; // resigned meanwhile
      const current = kv.kvs[0];
      if (!current || current.create_revision !== term.guard.createRevision) {
        this.#depose('key-lost');
        return;
      }
      // etcd may have granted more than asked (whole seconds, its minimum TTL), never less.
      const sessionMs = Math.min(this.#options.ttlMs, Number(answer.TTL) * 1_000);
      const untilMs = sentMs + Math.floor(sessionMs * LEADER_LEASE_FRACTION);
      if (untilMs > term.confirmedUntilMs) term.confirmedUntilMs = untilMs;
      this.#recovered();
    } catch (error) {
      if (this.#term !== term) return;
      if (error instanceof EtcdLeaseInvalidError) {
        this.#depose('session-lost');
        return;
      }
      this.#failed('keepalive', error);
    }
    if (this.#term === term && !this.isConfirmed()) this.#depose('leader-lease-expired');
  }

  /** One standby round: read the key; if it is free, grant a session and try to create the key with it. */
  async #campaign(): Promise<void> {
    const { client, advertise, clock, ttlMs } = this.#options;
    try {
      await this.#revokeAbandoned();
      const kv = (await this.#bounded(client.get(this.#key).options(this.#callOptions()).exec())).kvs[0];
      if (kv) {
        this.#learn(kv.value, kv.lease);
        this.#recovered();
        return;
      }
      const sentMs = clock.nowMs();
      const lease = client.lease(Math.ceil(ttlMs / 1_000), { autoKeepAlive: false, ...this.#callOptions() });
      const id = await this.#bounded(lease.grant()).catch((error: unknown) => {
        // A grant that answers after all is given up too (or expires by itself).
        void lease.grant().then(
          (late) => this.#abandoned.set(lease, late),
          () => undefined,
        );
        throw error;
      });
      let result;
      try {
        result = await this.#bounded(
          client
            .if(this.#key, 'Create', '==', 0)
            .then(client.put(this.#key).value(advertise).lease(id))
            .else(client.get(this.#key))
            .options(this.#callOptions())
            .commit(),
        );
      } catch (error) {
        // It may have been written: the session is given up, and the key with it.
        this.#abandoned.set(lease, id);
        throw error;
      }
      this.#recovered();
      if (!result.succeeded) {
        this.#abandoned.set(lease, id);
        const other = result.responses[0]?.response_range?.kvs[0];
        if (other) this.#learn(other.value, other.lease);
        return;
      }
      // The key's create revision is the revision of the transaction that created it.
      const guard: LeadershipGuard = { key: this.#key, createRevision: result.header.revision };
      // The session began no earlier than the grant was sent.
      this.#term = { lease, leaseId: id, guard, confirmedUntilMs: sentMs + this.#leaderLeaseMs };
      this.#leaderAddress = advertise;
      this.#options.log.info(
        { createRevision: guard.createRevision, leaderLeaseMs: this.#leaderLeaseMs },
        'elected leader (H2)',
      );
      this.#options.onElected(guard);
    } catch (error) {
      this.#failed('campaign', error);
    }
  }

  #learn(value: Buffer, lease: string): void {
    // A session this replica gave up holds the key until etcd expires or we revoke it: no leader to name.
    const ours = [...this.#abandoned.values()].includes(lease);
    this.#leaderAddress = ours ? undefined : value.toString('utf8');
  }

  #depose(reason: DepositionReason): void {
    const term = this.#term;
    if (!term) return;
    this.#term = undefined;
    this.#leaderAddress = undefined;
    this.#abandoned.set(term.lease, term.leaseId);
    this.#options.log.warn({ reason, createRevision: term.guard.createRevision }, 'no longer the leader (H2)');
    this.#options.onDeposed(reason);
    // Revoked now so a standby can win at once; if etcd is unreachable, retried before the next campaign.
    void this.#revokeAbandoned();
  }

  async #revokeAbandoned(): Promise<void> {
    await Promise.all(
      [...this.#abandoned.keys()].map(async (lease) => {
        try {
          await this.#bounded(lease.revoke(this.#callOptions()));
          this.#abandoned.delete(lease);
        } catch (error) {
          // Gone already (expired, or never granted) is as good as revoked.
          if (error instanceof EtcdLeaseInvalidError || lease.revoked()) this.#abandoned.delete(lease);
        }
      }),
    );
  }

  /** grpc call options bounding one etcd call by a round. */
  #callOptions(): { deadline: Date } {
    return { deadline: new Date(Date.now() + this.#roundMs) };
  }

  /** `pending`, or a rejection once a round has passed: a stopped etcd member may never answer. */
  async #bounded<T>(pending: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`etcd did not answer within ${this.#roundMs} ms`)), this.#roundMs);
    });
    try {
      return await Promise.race([pending, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  #failed(what: string, error: unknown): void {
    const message = `${what}: ${(error as Error).message}`;
    if (message === this.#lastFailure) return;
    this.#lastFailure = message;
    this.#options.log.warn({ err: error }, `etcd ${what} failed; retrying`);
  }

  #recovered(): void {
    if (this.#lastFailure === undefined) return;
    this.#lastFailure = undefined;
    this.#options.log.info('etcd answers again');
  }
}
