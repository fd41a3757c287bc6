// Protects L2/L3/L6/T1 and thereby S1/S2: a resource has at most one valid lease, every token it is granted is above every token ever reserved for it and never past 2^64−1, and each request id maps to at most one grant.
//
// Pure decisions over in-memory state: nothing here performs I/O or keeps
// timers. The Coordinator asks for a decision, makes it durable through the
// store, and only then applies it here, so memory never runs ahead of disk
// for anything a restart must keep. Time is the injected monotonic Clock (L1).
//
// V4: a resource's entry stays in memory only while something may still
// change it without a request (a valid lease, or an expired one that L8 has
// yet to fence) or an operation is using it. Past that it is idle: kept in a
// bounded LRU cache, then dropped. The store keeps everything an answer
// needs, so the Coordinator reads a dropped entry back (`restore`) before it
// asks anything about that resource, and every answer stays the same.
import { UINT64_MAX, type Clock } from '@fencer/common';
import type { StoredResource, StoredState } from './store.js';
import type { AcquireParams, Grant, LeaseView, ReleaseParams, RenewParams, RequestRecord } from './model.js';
import { RequestRecords, type HeldRecord } from './request-records.js';

/** A grant plus its expiry on this process's clock (never persisted: L7 recomputes it). */
interface LiveGrant extends Grant {
  readonly expiresAtMs: number;
}

interface ResourceState {
  /** Highest token reserved durably (L6). */
  reserved: bigint;
  /**
   * Highest sink fence learned from FENCE_REGRESSION; memory only. Lost with
   * the entry (restart or V4 eviction), it is learned again: the next token
   * below the fence meets FENCE_REGRESSION, and L3's one retry goes above it.
   */
  sinkFence: bigint;
  latest: LiveGrant | null;
  /** L8 back-off after the sink could not be reached. */
  fenceFailures: number;
  fenceRetryAtMs: number;
}

/** R1's lookup of an Acquire's request id. */
export type RequestLookup =
  /** Never seen, or its record is past retention (R3) and may be overwritten. */
  | { readonly kind: 'new' }
  /** Same parameters: answer the recorded grant (remainingMs computed now, 0 once it is over). */
  | { readonly kind: 'replay'; readonly lease: LeaseView }
  /** Same request id, different parameters (R2). */
  | { readonly kind: 'reused' };

/** L2's check. `remainingMs` is rounded up: retrying earlier is pointless. */
export type Availability =
  { readonly kind: 'free' } | { readonly kind: 'held'; readonly holder: LeaseView; readonly remainingMs: number };

/** L4's decision. `ttlChanged`: the grant's TTL differs from the stored one, which must be made durable first (L7). */
export type RenewDecision =
  | { readonly kind: 'renew'; readonly grant: Grant; readonly expiresAtMs: number; readonly ttlChanged: boolean }
  | { readonly kind: 'not-holder' }
  | { readonly kind: 'expired' };

/** L5's decision. */
export type ReleaseDecision =
  | { readonly kind: 'release'; readonly grant: Grant }
  /** The latest grant is this one and was already released: nothing to write, still released=true. */
  | { readonly kind: 'already-released' }
  | { readonly kind: 'not-holder' };

/** L8's decision for one resource: fence `holder` out with `token`, or nothing to do. */
export type ExpiryDecision =
  { readonly kind: 'fence'; readonly holder: Grant; readonly token: bigint } | { readonly kind: 'not-due' };

/** Which resource entries stay in memory (V4). */
export interface ResidencyOptions {
  /** Idle entries kept as a cache, least recently used dropped first; 0 drops each as soon as it is idle. */
  readonly maxIdleResources: number;
  /** L8 is on: an expired grant still has to be fenced, so its entry is not idle until it is. */
  readonly fenceOnExpiry: boolean;
}

/** Entries in memory: all of them, and the idle ones among them (kept only as a cache). */
export interface Residency {
  readonly resident: number;
  readonly idle: number;
}

/**
 * A forced release of the grant of one token (A4): fence `holder` out with
 * `token`; or nothing to do, because that grant was already fenced off or
 * is not the latest one (superseded, or never granted); or, T1, no token is
 * left to fence with.
 */
export type ForceDecision =
  | { readonly kind: 'fence'; readonly holder: Grant; readonly token: bigint }
  | { readonly kind: 'already-fenced' }
  | { readonly kind: 'not-latest' }
  | { readonly kind: 'token-space-exhausted' };

/** What Describe shows: the latest grant while it is valid, and the last granted token. */
export interface Description {
  readonly lease: LeaseView | null;
  /** 0n if nothing was ever granted; burned tokens are never reported. */
  readonly lastToken: bigint;
}

/**
 * Two of the rules the table applies, as pure arithmetic: L4's (may the
 * holder's Renew extend its grant now?) and T1's (the token after the
 * highest one reserved or known). Production always uses LEASE_RULES; only a
 * deliberately broken variant (the chaos suite's negative controls, through
 * CoordinatorSeams.wrapRules) passes others.
 */
export interface LeaseRules {
  /** L4 with L1: true only while `grant` is valid (not ended, `nowMs` < `expiresAtMs`). */
  readonly renewable: (
    grant: { readonly ended: Grant['ended']; readonly expiresAtMs: number },
    nowMs: number,
  ) => boolean;
  /** T1: `floor` + 1, or undefined once that would pass 2^64−1 (never wrapped, never kept at the maximum). */
  readonly tokenAfter: (floor: bigint) => bigint | undefined;
}

/** The rules as PROTOCOL.md states them. */
export const LEASE_RULES: LeaseRules = Object.freeze<LeaseRules>({
  renewable: (grant, nowMs) => isValid(grant, nowMs),
  tokenAfter: (floor) => (floor < UINT64_MAX ? floor + 1n : undefined),
});

const L8_BACKOFF_FIRST_MS = 100;
const L8_BACKOFF_MAX_MS = 5_000;

/**
 * The coordinator's in-memory lease state. Decisions (`lookupRequest`,
 * `availability`, `nextToken`, `decide*`) never mutate; `note*`/`apply*`
 * mutate and must only be called once the matching store write succeeded.
 * Throws only on misuse (a bug), never for protocol outcomes.
 */
export class LeaseTable {
  readonly #resources = new Map<string, ResourceState>();
  /** Resident entries that are idle, least recently used first (a Set keeps insertion order). */
  readonly #idle = new Set<string>();
  /** Resources an operation is using (between `hold` and `letGo`); never idle. */
  readonly #held = new Set<string>();
  readonly #requests = new RequestRecords();

  /**
   * @param requestRetentionMs how long request records are kept (R3), counted on `clock`.
   * @param rules L4's and T1's arithmetic; always LEASE_RULES but in a deliberately broken variant.
   */
  constructor(
    private readonly clock: Clock,
    private readonly requestRetentionMs: number,
    private readonly residency: ResidencyOptions,
    private readonly rules: LeaseRules = LEASE_RULES,
  ) {}

  /**
   * L7 and R3 after a restart: every unreleased, unfenced latest grant is
   * valid for a full TTL from now (the downtime is unknowable), and every
   * request record's retention starts now (kept longer, never shorter).
   * Everything is read, since L7 must see every unended grant; the entries
   * that are idle are then dropped past the cache bound (V4).
   */
  load(state: StoredState): void {
    const nowMs = this.clock.nowMs();
    for (const [resource, reserved] of state.counters) this.#state(resource).reserved = reserved;
    for (const grant of state.grants) this.#putGrant(grant, grant.ended === null ? nowMs + grant.ttlMs : nowMs);
    for (const record of state.requests) this.#requests.put({ record, sinceMs: nowMs });
    this.evictIdle();
  }

  /** True if the table answers for `resource` without the store: its entry is resident, or held by an operation. */
  isLoaded(resource: string): boolean {
    return this.#resources.has(resource) || this.#held.has(resource);
  }

  /**
   * Puts back the entry of a resource that is not resident, as the store
   * has it (`undefined`: never touched, nothing to put back). Its sink fence
   * is not stored and starts at 0 (see ResourceState). An unended grant is
   * taken as expired: its entry left memory only once the grant was over,
   * and a restart, the only way L7 revives a grant, reloads everything.
   */
  restore(resource: string, stored: StoredResource | undefined): void {
    if (this.#resources.has(resource)) throw new Error(`bug: restoring ${resource}, which is resident`);
    if (!stored) return;
    this.#state(resource).reserved = stored.counter;
    if (stored.grant) this.#putGrant(stored.grant, this.clock.nowMs());
  }

  /** An operation starts using `resource`: its entry stays resident until `letGo`. */
  hold(resource: string): void {
    this.#held.add(resource);
    this.#idle.delete(resource);
  }

  /** The operation is over: the entry, if idle now, becomes the most recently used idle one. */
  letGo(resource: string): void {
    this.#held.delete(resource);
    const entry = this.#resources.get(resource);
    if (entry && this.#isIdle(resource, entry, this.clock.nowMs())) this.#idle.add(resource);
    this.#trimIdle();
  }

  /** V4: finds the entries idle by now (leases that expired meanwhile) and drops idle ones past the cache bound. */
  evictIdle(): void {
    const nowMs = this.clock.nowMs();
    for (const [resource, entry] of this.#resources)
      if (!this.#idle.has(resource) && this.#isIdle(resource, entry, nowMs)) this.#idle.add(resource);
    this.#trimIdle();
  }

  /** V4: entries in memory now. */
  residencyCounts(): Residency {
    return { resident: this.#resources.size, idle: this.#idle.size };
  }

  /** V4/R3: request records kept now, in all and of `ownerId`. */
  recordCounts(ownerId: string): { readonly total: number; readonly owner: number } {
    return { total: this.#requests.size, owner: this.#requests.countOf(ownerId) };
  }

  /** R1/R2/R3: what the request id says, before any other rule is consulted. */
  lookupRequest(params: AcquireParams): RequestLookup {
    const held = this.#requests.get(params.requestId);
    const nowMs = this.clock.nowMs();
    if (!held || this.#pastRetention(held, nowMs)) return { kind: 'new' };
    const recorded = held.record;
    const same =
      recorded.resource === params.resource &&
      recorded.ownerId === params.ownerId &&
      recorded.incarnation === params.incarnation &&
      recorded.ttlMs === params.ttlMs;
    if (!same) return { kind: 'reused' };
    const latest = this.#resources.get(recorded.resource)?.latest;
    if (latest && latest.token === recorded.token) return { kind: 'replay', lease: this.#view(latest, nowMs) };
    // Superseded: a later grant exists, so this one is over (remaining 0).
    const { resource, ownerId, incarnation, token, ttlMs } = recorded;
    return { kind: 'replay', lease: { resource, ownerId, incarnation, token, ttlMs, remainingMs: 0 } };
  }

  /** L2: is there a valid lease on `resource`, held by anyone? */
  availability(resource: string): Availability {
    const latest = this.#resources.get(resource)?.latest;
    const nowMs = this.clock.nowMs();
    if (!latest || !isValid(latest, nowMs)) return { kind: 'free' };
    return { kind: 'held', holder: this.#view(latest, nowMs), remainingMs: Math.ceil(latest.expiresAtMs - nowMs) };
  }

  /**
   * L6: the token to reserve next — above every token reserved or granted
   * here and every sink fence learned. T1: undefined once that would pass
   * 2^64−1; the resource can never be granted or fenced again.
   */
  nextToken(resource: string): bigint | undefined {
    const entry = this.#resources.get(resource);
    if (!entry) return 1n;
    let floor = entry.reserved;
    if (entry.sinkFence > floor) floor = entry.sinkFence;
    if (entry.latest && entry.latest.token > floor) floor = entry.latest.token;
    return this.rules.tokenAfter(floor);
  }

  /** L4: NOT_LEASE_HOLDER first (someone else's or superseded), then LEASE_EXPIRED (even with no successor). */
  decideRenew(params: RenewParams): RenewDecision {
    const latest = this.#resources.get(params.resource)?.latest;
    if (!latest || !isSameGrant(latest, params)) return { kind: 'not-holder' };
    const nowMs = this.clock.nowMs();
    // A released or fenced grant is over too: it cannot be revived (L4).
    if (!this.rules.renewable(latest, nowMs)) return { kind: 'expired' };
    const ttlMs = params.ttlMs === 0 ? latest.ttlMs : params.ttlMs;
    return {
      kind: 'renew',
      grant: { ...stripExpiry(latest), ttlMs },
      expiresAtMs: nowMs + ttlMs,
      ttlChanged: ttlMs !== latest.ttlMs,
    };
  }

  /** L5: only the latest grant's exact holder releases, expired or not. */
  decideRelease(params: ReleaseParams): ReleaseDecision {
    const latest = this.#resources.get(params.resource)?.latest;
    if (!latest || !isSameGrant(latest, params)) return { kind: 'not-holder' };
    if (latest.ended === 'released') return { kind: 'already-released' };
    return { kind: 'release', grant: { ...stripExpiry(latest), ended: 'released' } };
  }

  /**
   * L8: the latest grant expired, nobody took over, and the fence was not
   * yet moved past it. T1: never due once no token is left to fence with.
   */
  decideFenceOnExpiry(resource: string): ExpiryDecision {
    const entry = this.#resources.get(resource);
    const latest = entry?.latest;
    const nowMs = this.clock.nowMs();
    if (!entry || !latest || latest.ended !== null || nowMs < latest.expiresAtMs || nowMs < entry.fenceRetryAtMs) {
      return { kind: 'not-due' };
    }
    const token = this.nextToken(resource);
    return token === undefined ? { kind: 'not-due' } : { kind: 'fence', holder: stripExpiry(latest), token };
  }

  /**
   * A4's forced release: the latest grant, if its token is `token`, is
   * fenced off whether it is valid, expired or released (a released holder
   * still holds the fence's token, F5), unless it already was.
   */
  decideForceRelease(resource: string, token: bigint): ForceDecision {
    const latest = this.#resources.get(resource)?.latest;
    if (!latest || latest.token !== token) return { kind: 'not-latest' };
    if (latest.ended === 'fenced') return { kind: 'already-fenced' };
    const next = this.nextToken(resource);
    return next === undefined
      ? { kind: 'token-space-exhausted' }
      : { kind: 'fence', holder: stripExpiry(latest), token: next };
  }

  /** L8: resources whose decision would currently be 'fence'. */
  dueForFencing(): string[] {
    const due: string[] = [];
    for (const resource of this.#resources.keys())
      if (this.decideFenceOnExpiry(resource).kind === 'fence') due.push(resource);
    return due;
  }

  /** Describe: the latest grant while valid; the last granted token either way. */
  describe(resource: string): Description {
    const latest = this.#resources.get(resource)?.latest ?? null;
    const nowMs = this.clock.nowMs();
    return {
      lease: latest && isValid(latest, nowMs) ? this.#view(latest, nowMs) : null,
      lastToken: latest?.token ?? 0n,
    };
  }

  /** R3: request ids whose retention has run out. */
  collectableRequests(): string[] {
    const nowMs = this.clock.nowMs();
    const ids: string[] = [];
    for (const [id, held] of this.#requests.entries()) if (this.#pastRetention(held, nowMs)) ids.push(id);
    return ids;
  }

  /** True if `requestId` is recorded and past retention (re-checked under its lock before deleting). */
  isCollectable(requestId: string): boolean {
    const held = this.#requests.get(requestId);
    return held !== undefined && this.#pastRetention(held, this.clock.nowMs());
  }

  /** After `store.reserveToken` succeeded. */
  noteReserved(resource: string, token: bigint): void {
    const entry = this.#state(resource);
    if (token > entry.reserved) entry.reserved = token;
  }

  /** After the sink reported FENCE_REGRESSION with `fence`. */
  noteSinkFence(resource: string, fence: bigint): void {
    const entry = this.#state(resource);
    if (fence > entry.sinkFence) entry.sinkFence = fence;
  }

  /** After `store.recordGrant` succeeded: the lease runs from now (the sink acked first, L3). */
  applyGrant(grant: Grant, record: RequestRecord): LeaseView {
    const entry = this.#state(grant.resource);
    if (grant.token > entry.reserved)
      throw new Error(`bug: granting unreserved token ${grant.token} of ${grant.resource}`);
    if (entry.latest && grant.token <= entry.latest.token)
      throw new Error(`bug: token ${grant.token} of ${grant.resource} is not above the latest grant`);
    const nowMs = this.clock.nowMs();
    entry.latest = { ...grant, expiresAtMs: nowMs + grant.ttlMs };
    entry.fenceFailures = 0;
    entry.fenceRetryAtMs = 0;
    this.#requests.put({ record, sinceMs: nowMs });
    return this.#view(entry.latest, nowMs);
  }

  /** After a changed TTL was written (an unchanged one needs no write: expiry is never stored). */
  applyRenew(decision: Extract<RenewDecision, { kind: 'renew' }>): LeaseView {
    const entry = this.#latestOf(decision.grant);
    entry.latest = { ...decision.grant, expiresAtMs: decision.expiresAtMs };
    return this.#view(entry.latest, this.clock.nowMs());
  }

  /** After the released grant was written (L5): the resource is free at once. */
  applyRelease(grant: Grant): void {
    const entry = this.#latestOf(grant);
    entry.latest = { ...entry.latest!, ended: 'released' };
  }

  /** After the sink's fence moved past `holder`'s token and that was written (L8, A4's forced release). */
  applyFenced(holder: Grant): void {
    const entry = this.#latestOf(holder);
    entry.latest = { ...entry.latest!, ended: 'fenced' };
    entry.fenceFailures = 0;
    entry.fenceRetryAtMs = 0;
  }

  /** L8 could not reach the sink: try again after a capped exponential back-off. */
  noteFenceFailure(resource: string): number {
    const entry = this.#state(resource);
    entry.fenceFailures += 1;
    const delayMs = Math.min(L8_BACKOFF_FIRST_MS * 2 ** (entry.fenceFailures - 1), L8_BACKOFF_MAX_MS);
    entry.fenceRetryAtMs = this.clock.nowMs() + delayMs;
    return delayMs;
  }

  /** After the record's deletion was written (R3). */
  forgetRequest(requestId: string): void {
    this.#requests.drop(requestId);
  }

  /**
   * V4: nothing changes the entry until a request comes (no valid lease, no
   * L8 fence due, ever again), and the store holds all of it but the sink
   * fence. Request records do not keep an entry: the Coordinator restores
   * it before R1's lookup, and R3 finds an absent grant as over as an idle one.
   */
  #isIdle(resource: string, entry: ResourceState, nowMs: number): boolean {
    if (this.#held.has(resource)) return false;
    const latest = entry.latest;
    if (!latest || latest.ended !== null) return true;
    if (nowMs < latest.expiresAtMs) return false;
    // Expired, not ended: L8 still has to fence it, unless T1 left no token to fence with.
    return !this.residency.fenceOnExpiry || this.nextToken(resource) === undefined;
  }

  /** Drops idle entries, least recently used first, down to the cache bound. */
  #trimIdle(): void {
    for (const resource of this.#idle) {
      if (this.#idle.size <= this.residency.maxIdleResources) return;
      this.#idle.delete(resource);
      this.#resources.delete(resource);
    }
  }

  /** Makes `grant`, as stored, the latest grant of its resource, valid until `expiresAtMs` unless ended. */
  #putGrant(grant: Grant, expiresAtMs: number): void {
    const entry = this.#state(grant.resource);
    entry.latest = { ...grant, expiresAtMs };
    // Defensive: a counter below a stored grant would be a store bug, and reusing a token is the one thing never allowed (L6).
    if (entry.reserved < grant.token) entry.reserved = grant.token;
  }

  /**
   * R3, bounded by R1: retention has run out and the record's grant is no
   * longer the valid lease of its resource. A holder's retry is thus never
   * answered LEASE_HELD however long its lease is renewed, and at most one
   * record per resource outlives the retention. Once over, a grant never
   * becomes valid again in this process (L4), so the answer cannot flip back.
   */
  #pastRetention(held: HeldRecord, nowMs: number): boolean {
    if (nowMs - held.sinceMs < this.requestRetentionMs) return false;
    const latest = this.#resources.get(held.record.resource)?.latest;
    return !(latest && latest.token === held.record.token && isValid(latest, nowMs));
  }

  #state(resource: string): ResourceState {
    let entry = this.#resources.get(resource);
    if (!entry) {
      entry = { reserved: 0n, sinkFence: 0n, latest: null, fenceFailures: 0, fenceRetryAtMs: 0 };
      this.#resources.set(resource, entry);
    }
    return entry;
  }

  #latestOf(grant: Grant): ResourceState {
    const entry = this.#resources.get(grant.resource);
    if (!entry?.latest || entry.latest.token !== grant.token)
      throw new Error(`bug: ${grant.resource} token ${grant.token} is not the latest grant`);
    return entry;
  }

  #view(grant: LiveGrant, nowMs: number): LeaseView {
    const remainingMs = isValid(grant, nowMs) ? Math.floor(grant.expiresAtMs - nowMs) : 0;
    return {
      resource: grant.resource,
      ownerId: grant.ownerId,
      incarnation: grant.incarnation,
      token: grant.token,
      ttlMs: grant.ttlMs,
      remainingMs,
    };
  }
}

/** L1: valid while now < expiresAt; a released or fenced grant is never valid. */
function isValid(grant: Pick<LiveGrant, 'ended' | 'expiresAtMs'>, nowMs: number): boolean {
  return grant.ended === null && nowMs < grant.expiresAtMs;
}

function isSameGrant(grant: Grant, who: { ownerId: string; incarnation: bigint; token: bigint }): boolean {
  return grant.ownerId === who.ownerId && grant.incarnation === who.incarnation && grant.token === who.token;
}

function stripExpiry(grant: LiveGrant): Grant {
  const { expiresAtMs: _expiresAtMs, ...rest } = grant;
  return rest;
}
