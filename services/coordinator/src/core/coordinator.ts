// Protects S1/S2 through L3's order: a token is reserved durably, then made the sink's fence, and only then recorded and handed out; per request id and per resource, one Acquire at a time; and T1: no token past 2^64−1 is ever reserved or sent.
//
// Orchestration over three ports (LeaseStore, SinkPort, the id generator)
// and the LeaseTable's decisions. No transport, no timers: the L8 and R3
// sweeps are methods that an adapter calls on a schedule.
import {
  KeyedLock,
  settleAll,
  unreachable,
  unrecorded,
  type Clock,
  type PhaseAttributes,
  type Phases,
  type StoreFailedError,
} from '@fencer/common';
import { LeaseTable, type Description, type LeaseRules, type Residency } from './lease-table.js';
import type { LeaseStore } from './store.js';
import type { SinkAdvanceOutcome, SinkPort } from './sink-port.js';
import type { AcquireParams, Grant, LeaseView, ReleaseParams, RenewParams, RequestRecord } from './model.js';
import { OffenderLog, RateLimiter, type CoreLimits } from './quota.js';

/** Sink answers that mean this coordinator's credential is wrong or missing (A1). */
const AUTH_CODES = new Set(['UNAUTHENTICATED', 'PERMISSION_DENIED']);

/** Acquire's outcome (L2, L3, R1, R2). */
export type AcquireOutcome =
  | { readonly kind: 'granted'; readonly lease: LeaseView }
  /** R1: the recorded grant of this request id; remainingMs computed now. */
  | { readonly kind: 'replayed'; readonly lease: LeaseView }
  /** L2: a valid lease exists; `remainingMs` rounded up. */
  | { readonly kind: 'held'; readonly holder: LeaseView; readonly remainingMs: number }
  /** R2. */
  | { readonly kind: 'request-id-reused'; readonly requestId: string }
  /** L3 step 2 failed; nothing was granted. `sinkCode` is the sink's gRPC code name. */
  | { readonly kind: 'sink-unavailable'; readonly sinkCode: string }
  /** L3: the sink's fence was beyond the token even after one retry above it. */
  | { readonly kind: 'fence-conflict'; readonly fence: bigint }
  /** T1: the next token would pass 2^64−1; nothing was reserved or sent, and no retry can help. */
  | { readonly kind: 'token-space-exhausted' }
  /** V4: this owner's Acquire rate is spent; a token is back in `retryAfterMs`. Nothing was done. */
  | { readonly kind: 'rate-limited'; readonly retryAfterMs: number }
  /** V4/R3: granting would keep more request records than `limit` for this owner or for the service. */
  | { readonly kind: 'records-full'; readonly scope: 'owner' | 'service'; readonly limit: number };

/** Renew's outcome (L4). */
export type RenewOutcome =
  | { readonly kind: 'renewed'; readonly lease: LeaseView }
  | { readonly kind: 'not-holder' }
  | { readonly kind: 'expired' };

/** Release's outcome (L5): never an error. */
export type ReleaseOutcome = { readonly kind: 'released' } | { readonly kind: 'not-released' };

/** ForceRelease's outcome (A4). */
export type ForceReleaseOutcome =
  /** The grant is ended and the sink's fence is durably `fence`, above its token. */
  | { readonly kind: 'forced'; readonly fence: bigint; readonly lastToken: bigint }
  /** Nothing changed: the grant was already fenced off, or is not the latest (a retry after success lands here). */
  | { readonly kind: 'unchanged'; readonly lastToken: bigint }
  /** The sink did not confirm the new fence; the grant is not ended, and a retry may try again. */
  | { readonly kind: 'sink-unavailable'; readonly sinkCode: string }
  /** T1: no token is left to fence with. */
  | { readonly kind: 'token-space-exhausted' };

/** One resource's result of an L8 sweep. */
export type FenceOnExpiryOutcome =
  /** The sink's fence is now `fence`, above the expired holder's token. */
  | { readonly kind: 'fenced'; readonly resource: string; readonly fence: bigint }
  /** The sink could not be reached; retried after `retryInMs` (capped back-off). */
  | { readonly kind: 'retry-later'; readonly resource: string; readonly sinkCode: string; readonly retryInMs: number }
  | { readonly kind: 'not-due'; readonly resource: string };

/** The subset of a pino logger the core uses. */
export interface CoreLog {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** What the core is built from; all injected so tests control time, disk, sink and ids. */
export interface CoreDeps {
  /** The only time source of lease arithmetic (L1). */
  readonly clock: Clock;
  /** Durable state; the core changes memory only after a write to it succeeded. */
  readonly store: LeaseStore;
  /** Where fences are advanced (L3 step 2, L8); every call bounded in time. */
  readonly sink: SinkPort;
  /** A fresh id per grant attempt (the AdvanceFence grant_id), never repeated. */
  readonly newGrantId: () => string;
  /** R3 retention of request records, in ms of `clock`. */
  readonly requestRetentionMs: number;
  /** V4: what one owner, and all together, may keep and do, and how many idle resource entries stay in memory. */
  readonly limits: CoreLimits;
  /** L8 is on (something calls `fenceExpiredLeases`): expired leases stay in memory until fenced. */
  readonly fenceOnExpiry: boolean;
  readonly log: CoreLog;
  /** L4's and T1's arithmetic; default LEASE_RULES, another only in a deliberately broken variant. */
  readonly rules?: LeaseRules;
  /** Records L3's steps (reserve, advance, record) of each grant, as trace spans; default nothing. */
  readonly phases?: Phases;
}

const describeAdvance = (advance: SinkAdvanceOutcome): PhaseAttributes =>
  advance.kind === 'unavailable'
    ? { 'fencer.advance': advance.kind, 'fencer.sink_code': advance.sinkCode }
    : { 'fencer.advance': advance.kind, 'fencer.fence': String(advance.fence) };

/** What the gRPC handlers call on the core. */
export type CoordinatorApi = Pick<
  Coordinator,
  'acquire' | 'renew' | 'release' | 'describe' | 'nextToken' | 'forceRelease'
>;

/**
 * The lease service's protocol logic. Every method serializes on the
 * resource it touches (and Acquire first on its request id, always in that
 * order, so no two sections wait on each other in a cycle), and in that
 * section first reads the resource's entry back from the store if it left
 * memory (V4), so the table always decides on everything. Rejects only on
 * store I/O failure, leaving memory as it was before the failed write (and
 * from then on every call rejects with that StoreFailedError: T3), or when
 * called after `close()`.
 */
export class Coordinator {
  readonly #table: LeaseTable;
  readonly #requestLocks = new KeyedLock();
  /** Per-resource serialization; used only through `#onResource`, which also brings the entry into memory (V4). */
  readonly #resourceSections = new KeyedLock();
  readonly #rate: RateLimiter;
  readonly #offenders = new OffenderLog();
  /** Operations in progress, so `close()` can wait for them before the store is closed. */
  readonly #running = new Set<Promise<unknown>>();
  #closed = false;
  /** T3: set once the store failed; every later call rejects with it, even one memory could answer. */
  #storeFailure: StoreFailedError | undefined;

  readonly #phases: Phases;

  private constructor(private readonly deps: CoreDeps) {
    this.#phases = deps.phases ?? unrecorded;
    this.#table = new LeaseTable(
      deps.clock,
      deps.requestRetentionMs,
      { maxIdleResources: deps.limits.maxIdleResources, fenceOnExpiry: deps.fenceOnExpiry },
      deps.rules,
    );
    this.#rate = new RateLimiter(deps.clock, deps.limits.maxAcquiresPerSecond);
  }

  /** Loads the store's state (L7: surviving grants valid for a full TTL from now) and returns a ready core. */
  static async open(deps: CoreDeps): Promise<Coordinator> {
    const coordinator = new Coordinator(deps);
    coordinator.#table.load(await deps.store.load());
    void deps.store.whenFailed().then((failure) => (coordinator.#storeFailure = failure));
    return coordinator;
  }

  /**
   * Refuses new operations (they reject) and resolves once every operation
   * in progress has finished, including those whose caller has gone away.
   * Call it before closing the store, so that no grant half-done at shutdown
   * writes to a closed store. Each operation is bounded by the sink's
   * deadline, so this is too. Never rejects.
   */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** L3 in order, after R1 and L2. Two Acquires of one request id or one resource never overlap. */
  acquire(params: AcquireParams): Promise<AcquireOutcome> {
    return this.#track(() =>
      this.#requestLocks.run(params.requestId, () =>
        this.#onResource(params.resource, () => this.#acquireLocked(params)),
      ),
    );
  }

  async #acquireLocked(params: AcquireParams): Promise<AcquireOutcome> {
    const { deps } = this;
    // R1: the request id comes first, so a holder's retry is never LEASE_HELD.
    const lookup = this.#table.lookupRequest(params);
    switch (lookup.kind) {
      case 'replay':
        return { kind: 'replayed', lease: lookup.lease };
      case 'reused':
        return { kind: 'request-id-reused', requestId: params.requestId };
      case 'new':
        // A record past retention is simply overwritten by this grant's (or collected by the sweep).
        break;
      default:
        return unreachable(lookup);
    }

    // V4: after R1, so a retry is always answered; before anything that costs a write.
    const retryAfterMs = this.#rate.take(params.ownerId);
    if (retryAfterMs !== undefined) return this.#refuse(params.ownerId, { kind: 'rate-limited', retryAfterMs });

    const availability = this.#table.availability(params.resource);
    if (availability.kind === 'held')
      return { kind: 'held', holder: availability.holder, remainingMs: availability.remainingMs };

    const full = this.#recordsFull(params.ownerId);
    if (full) return this.#refuse(params.ownerId, full);
    this.#offenders.forgive(params.ownerId);

    for (let attempt = 1; ; attempt += 1) {
      // T1, checked before anything is stored or sent: also after a regression to a fence of 2^64−1.
      const token = this.#table.nextToken(params.resource);
      if (token === undefined) return { kind: 'token-space-exhausted' };
      // L3 (1) and (2); a failure grants nothing and the token stays burned.
      const advance = await this.#reserveAndAdvance(params.resource, token, params.ownerId, { attempt });
      switch (advance.kind) {
        case 'advanced': {
          // L3 (3): grant and request id in one durable batch, then (4) the reply.
          const grant: Grant = { ...pick(params), token, ended: null };
          const record: RequestRecord = { ...pick(params), requestId: params.requestId, token };
          await this.#phases.run('record grant', () => deps.store.recordGrant(grant, record));
          return { kind: 'granted', lease: this.#table.applyGrant(grant, record) };
        }
        case 'regression':
          // L6: a lost data dir or a second coordinator. The next token goes above the
          // sink's fence, and its reservation makes that raise durable; retried once.
          deps.log.warn(
            { resource: params.resource, token: String(token), fence: String(advance.fence), attempt },
            'sink fence is ahead of the token counter',
          );
          if (attempt >= 2) return { kind: 'fence-conflict', fence: advance.fence };
          continue;
        case 'unavailable':
          // The caller only sees SINK_UNAVAILABLE; the operator needs to know
          // that a refused credential is a misconfiguration, not a blip.
          deps.log.warn(
            { resource: params.resource, token: String(token), sinkCode: advance.sinkCode },
            AUTH_CODES.has(advance.sinkCode)
              ? "the sink refused this coordinator's credential (check --sink-token-file); nothing granted"
              : 'the sink did not advance the fence; nothing granted',
          );
          return { kind: 'sink-unavailable', sinkCode: advance.sinkCode };
        default:
          return unreachable(advance);
      }
    }
  }

  /**
   * L4. A changed TTL is synced before it is answered, because L7 restores
   * the stored TTL after a crash and an older, shorter one would cut the
   * holder short. A renew that keeps the TTL writes nothing: expiry itself is
   * never stored (L7 recomputes it), so plain heartbeats cost no disk write.
   */
  renew(params: RenewParams): Promise<RenewOutcome> {
    return this.#track(() =>
      this.#onResource(params.resource, async () => {
        const decision = this.#table.decideRenew(params);
        switch (decision.kind) {
          case 'renew':
            if (decision.ttlChanged) await this.deps.store.changeTtl(decision.grant);
            return { kind: 'renewed', lease: this.#table.applyRenew(decision) };
          case 'not-holder':
          case 'expired':
            return { kind: decision.kind };
          default:
            return unreachable(decision);
        }
      }),
    );
  }

  /**
   * L5. Written without sync, which is safe: if a crash loses the write, the
   * grant comes back as unreleased and L7 keeps it valid one more TTL — the
   * resource is free a TTL later than promised, and no token is reused or
   * fence moved backwards.
   */
  release(params: ReleaseParams): Promise<ReleaseOutcome> {
    return this.#track(() =>
      this.#onResource(params.resource, async () => {
        const decision = this.#table.decideRelease(params);
        switch (decision.kind) {
          case 'release':
            await this.deps.store.endGrant(decision.grant);
            this.#table.applyRelease(decision.grant);
            return { kind: 'released' };
          case 'already-released':
            return { kind: 'released' };
          case 'not-holder':
            return { kind: 'not-released' };
          default:
            return unreachable(decision);
        }
      }),
    );
  }

  /**
   * Describe: the valid lease, if any, and the last granted token (never a
   * burned one). Answered at once from memory, even while an operation on
   * the resource is in progress; only an entry that left memory (V4) is
   * first read back, under the resource's lock.
   */
  describe(resource: string): Promise<Description> {
    if (this.#storeFailure) return Promise.reject(this.#storeFailure);
    if (this.#table.isLoaded(resource)) return Promise.resolve(this.#table.describe(resource));
    return this.#track(() => this.#onResource(resource, async () => this.#table.describe(resource)));
  }

  /** V4: resource entries in memory now, for metrics and tests. */
  residency(): Residency {
    return this.#table.residencyCounts();
  }

  /** The token the next grant or fence of `resource` would reserve (L6); undefined once none is left (T1). */
  nextToken(resource: string): Promise<bigint | undefined> {
    if (this.#storeFailure) return Promise.reject(this.#storeFailure);
    if (this.#table.isLoaded(resource)) return Promise.resolve(this.#table.nextToken(resource));
    return this.#track(() => this.#onResource(resource, async () => this.#table.nextToken(resource)));
  }

  /**
   * L8, one sweep: for every lease that expired with no successor, reserve a
   * new token and make it the sink's fence (no grant), so the expired
   * holder's writes are refused too. Resources are handled concurrently; the
   * sweep settles only once all of them have, so two sweeps never overlap.
   * Rejects with the first store failure.
   */
  fenceExpiredLeases(): Promise<FenceOnExpiryOutcome[]> {
    return settleAll(this.#table.dueForFencing().map((resource) => this.fenceIfExpired(resource)));
  }

  /** L8 for one resource; 'not-due' unless its latest grant expired with no successor. */
  fenceIfExpired(resource: string): Promise<FenceOnExpiryOutcome> {
    return this.#track(() =>
      this.#onResource(resource, async () => {
        const { deps } = this;
        const decision = this.#table.decideFenceOnExpiry(resource);
        if (decision.kind === 'not-due') return { kind: 'not-due', resource };
        // The new token goes to no one. Bound to the expired holder, it admits
        // no identity that the fence it replaces did not already admit (A5);
        // bound to no one, it would admit every worker that guessed it.
        const fenced = await this.#fenceOff(resource, decision.holder, decision.token, decision.holder.ownerId, {
          fenceOnExpiry: true,
        });
        if (fenced.kind === 'unavailable') {
          const retryInMs = this.#table.noteFenceFailure(resource);
          deps.log.warn(
            { resource, sinkCode: fenced.sinkCode, retryInMs },
            'fence-on-expiry could not reach the sink; will retry',
          );
          return { kind: 'retry-later', resource, sinkCode: fenced.sinkCode, retryInMs };
        }
        deps.log.info(
          { resource, holderToken: String(decision.holder.token), fence: String(fenced.fence) },
          'fenced an expired lease',
        );
        return { kind: 'fenced', resource, fence: fenced.fence };
      }),
    );
  }

  /**
   * A4's forced release of the grant of `token`: like L8, but asked for by
   * an admin and whether or not the lease is still valid. A fresh token is
   * reserved and made the sink's fence first, bound to `adminId` (A5: no
   * worker can write under a fence that belongs to no grant; null with auth
   * off), and only then is the grant ended, so the holder is cut off
   * (STALE_TOKEN) before anyone is told it is. Naming the grant's token
   * makes a retry safe: once that grant is fenced off or superseded, a
   * retry changes nothing and never cuts off a later holder.
   */
  forceRelease(resource: string, token: bigint, adminId: string | null): Promise<ForceReleaseOutcome> {
    return this.#track(() =>
      this.#onResource(resource, async () => {
        const { deps } = this;
        const decision = this.#table.decideForceRelease(resource, token);
        switch (decision.kind) {
          case 'already-fenced':
          case 'not-latest':
            return { kind: 'unchanged', lastToken: this.#table.describe(resource).lastToken };
          case 'token-space-exhausted':
            return decision;
          case 'fence':
            break;
          default:
            return unreachable(decision);
        }
        const fenced = await this.#fenceOff(resource, decision.holder, decision.token, adminId, { forceRelease: true });
        if (fenced.kind === 'unavailable') {
          deps.log.warn({ resource, sinkCode: fenced.sinkCode }, 'forced release could not reach the sink');
          return { kind: 'sink-unavailable', sinkCode: fenced.sinkCode };
        }
        deps.log.info(
          {
            resource,
            holder: decision.holder.ownerId,
            holderToken: String(token),
            fence: String(fenced.fence),
            adminId,
          },
          'forced release: the holder is fenced off',
        );
        return { kind: 'forced', fence: fenced.fence, lastToken: token };
      }),
    );
  }

  /**
   * R3: drops request records past retention. Each deletion runs under its
   * request id's lock, so it can never race an Acquire re-recording that id.
   * Also frees the rate buckets that have refilled, and drops the resource
   * entries idle past the cache bound, such as leases that expired (V4).
   * Resolves with the number of records collected once every deletion has
   * settled; rejects with the first store failure.
   */
  async collectRequests(): Promise<number> {
    this.#rate.prune();
    this.#table.evictIdle();
    const collected = await settleAll(
      this.#table.collectableRequests().map((requestId) =>
        this.#track(() =>
          this.#requestLocks.run(requestId, async () => {
            if (!this.#table.isCollectable(requestId)) return 0;
            await this.deps.store.deleteRequests([requestId]);
            this.#table.forgetRequest(requestId);
            return 1;
          }),
        ),
      ),
    );
    return collected.reduce<number>((sum, n) => sum + n, 0);
  }

  /**
   * Runs `section` under `resource`'s lock with its entry in memory: read
   * back from the store first if it had left (V4), and held there until the
   * section ends, so no other resource's operation evicts it mid-way. The
   * read happens under the lock, so two calls never restore one entry twice.
   */
  #onResource<T>(resource: string, section: () => Promise<T>): Promise<T> {
    return this.#resourceSections.run(resource, async () => {
      if (!this.#table.isLoaded(resource)) this.#table.restore(resource, await this.deps.store.loadResource(resource));
      this.#table.hold(resource);
      try {
        return await section();
      } finally {
        this.#table.letGo(resource);
      }
    });
  }

  /**
   * L3 steps 1–2 and L8's fence: reserve `token`, the table's next one,
   * durably (L6: the counter is on disk before the token leaves this
   * process), then ask the sink to make it the fence, bound to `ownerId`
   * (A5; null binds no one). A regression's fence is remembered, so the next reservation goes
   * above it. Whatever the sink says, the token is spent: it is never
   * reserved again.
   */
  async #reserveAndAdvance(
    resource: string,
    token: bigint,
    ownerId: string | null,
    logContext: object,
  ): Promise<SinkAdvanceOutcome> {
    const { store, sink } = this.deps;
    await this.#phases.run('reserve token', () => store.reserveToken(resource, token));
    this.#table.noteReserved(resource, token);
    this.deps.log.debug({ resource, token: String(token), ...logContext }, 'advancing the sink fence');
    const advance = await this.#phases.run(
      'advance fence',
      () => sink.advanceFence({ resource, token, grantId: this.deps.newGrantId(), ownerId }),
      describeAdvance,
    );
    if (advance.kind === 'regression') this.#table.noteSinkFence(resource, advance.fence);
    return advance;
  }

  /**
   * Fences `holder`'s grant off (L8, A4's forced release): `token`, reserved
   * for no grant, becomes the sink's fence, bound to `boundTo`, and only
   * then is the grant ended, so its holder is cut off (STALE_TOKEN) before
   * anyone is told it is. A regression means the fence is already at or
   * above `token`, above the holder's: fenced off by someone else, which
   * serves as well. The end is not synced: if lost, L7 revives the grant
   * for a TTL, but its writes stay refused.
   */
  async #fenceOff(
    resource: string,
    holder: Grant,
    token: bigint,
    boundTo: string | null,
    logContext: object,
  ): Promise<{ kind: 'fenced'; fence: bigint } | { kind: 'unavailable'; sinkCode: string }> {
    const advance = await this.#reserveAndAdvance(resource, token, boundTo, logContext);
    switch (advance.kind) {
      case 'advanced':
      case 'regression':
        break;
      case 'unavailable':
        return advance;
      default:
        return unreachable(advance);
    }
    const fenced: Grant = { ...holder, ended: 'fenced' };
    await this.#phases.run('end grant', () => this.deps.store.endGrant(fenced));
    this.#table.applyFenced(fenced);
    return { kind: 'fenced', fence: advance.fence };
  }

  /**
   * V4/R3: a grant adds one request record; refused if that would pass the
   * owner's quota or the service's bound. Records past retention still count
   * until the R3 sweep has collected them, so the bound holds on disk too.
   */
  #recordsFull(ownerId: string): Extract<AcquireOutcome, { kind: 'records-full' }> | undefined {
    const { limits } = this.deps;
    const counts = this.#table.recordCounts(ownerId);
    if (counts.owner >= limits.maxRecordsPerOwner)
      return { kind: 'records-full', scope: 'owner', limit: limits.maxRecordsPerOwner };
    if (counts.total >= limits.maxRequestRecords)
      return { kind: 'records-full', scope: 'service', limit: limits.maxRequestRecords };
    return undefined;
  }

  /** Answers a V4 refusal, logging it once per owner and kind until the owner is within bounds again. */
  #refuse<T extends Extract<AcquireOutcome, { kind: 'rate-limited' | 'records-full' }>>(
    ownerId: string,
    outcome: T,
  ): T {
    if (this.#offenders.first(ownerId, outcome.kind))
      this.deps.log.warn(
        { ownerId, ...outcome },
        'owner reached a coordinator limit (V4); refusing until it is back within',
      );
    return outcome;
  }

  /** Runs `operation` as one that `close()` waits for; refuses once closed or once the store failed (T3). */
  #track<T>(operation: () => Promise<T>): Promise<T> {
    if (this.#storeFailure) return Promise.reject(this.#storeFailure);
    if (this.#closed) return Promise.reject(new Error('the coordinator is closed'));
    const running = operation();
    this.#running.add(running);
    const forget = () => this.#running.delete(running);
    running.then(forget, forget);
    return running;
  }
}

function pick(params: AcquireParams) {
  return { resource: params.resource, ownerId: params.ownerId, incarnation: params.incarnation, ttlMs: params.ttlMs };
}
