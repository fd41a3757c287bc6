// V4: resource entries leave memory once idle (no valid lease, nothing for
// L8 to do) past --max-idle-resources, and are read back from the store
// when touched again. The bound holds, and every answer is the one a
// coordinator that keeps everything in memory gives: each scenario and each
// seeded random history runs on a coordinator with bound 0 and on one that
// never evicts, and their answers are compared step by step.
import { describe, expect, it } from 'vitest';
import { gate, hasSettled } from '@fencer/testkit';
import { FakeClock, prng, UINT64_MAX } from '@fencer/common';
import { UNLIMITED } from '../../test/doubles/limits.js';
import { MemoryDisk, MemoryStore } from '../../test/doubles/memory-store.js';
import { MemorySink } from '../../test/doubles/memory-sink.js';
import { Coordinator, type AcquireOutcome, type CoreLog } from './coordinator.js';
import type { StoredResource } from './store.js';
import type { AcquireParams, LeaseView } from './model.js';

const quiet: CoreLog = { debug() {}, info() {}, warn() {} };
const TTL = 1_000;
const NEVER_EVICT = Number.MAX_SAFE_INTEGER;

/** A MemoryStore that counts per-resource reads, to show an entry really left memory. */
class CountingStore extends MemoryStore {
  readonly reads: string[] = [];
  override async loadResource(resource: string): Promise<StoredResource | undefined> {
    this.reads.push(resource);
    return super.loadResource(resource);
  }
}

interface World {
  readonly clock: FakeClock;
  readonly disk: MemoryDisk;
  readonly sink: MemorySink;
  core: Coordinator;
  store: CountingStore;
  /** A restart on the same disk and sink. */
  restart(): Promise<void>;
}

async function world(
  maxIdleResources: number,
  options: { fenceOnExpiry?: boolean | undefined; disk?: MemoryDisk | undefined; retentionMs?: number } = {},
): Promise<World> {
  const clock = new FakeClock(0);
  const disk = options.disk ?? new MemoryDisk();
  const sink = new MemorySink();
  let ids = 0;
  const open = async () => {
    const store = new CountingStore(disk);
    const core = await Coordinator.open({
      clock,
      store,
      sink,
      newGrantId: () => `grant-${++ids}`,
      requestRetentionMs: options.retentionMs ?? 3_600_000,
      limits: { ...UNLIMITED, maxIdleResources },
      fenceOnExpiry: options.fenceOnExpiry ?? false,
      log: quiet,
    });
    return { core, store };
  };
  const w: World = {
    clock,
    disk,
    sink,
    ...(await open()),
    async restart() {
      await w.core.close();
      Object.assign(w, await open());
    },
  };
  return w;
}

let nextId = 0;
function req(overrides: Partial<AcquireParams> = {}): AcquireParams {
  return { requestId: `req-${++nextId}`, resource: 'r', ownerId: 'alice', incarnation: 1n, ttlMs: TTL, ...overrides };
}

function granted(outcome: AcquireOutcome): LeaseView {
  if (outcome.kind !== 'granted') throw new Error(`expected granted, got ${outcome.kind}`);
  return outcome.lease;
}

const holderOf = (lease: LeaseView) => ({
  resource: lease.resource,
  ownerId: lease.ownerId,
  incarnation: lease.incarnation,
  token: lease.token,
});

describe('V4: idle resource entries are bounded', () => {
  it.each([0, 5])(
    'after 200 Acquire+Release cycles on distinct resources, at most %d entries stay in memory',
    async (bound) => {
      const w = await world(bound);
      for (let i = 0; i < 200; i += 1) {
        const lease = granted(await w.core.acquire(req({ resource: `r-${i}` })));
        expect(await w.core.release(holderOf(lease))).toEqual({ kind: 'released' });
      }
      expect(w.core.residency()).toEqual({ resident: bound, idle: bound });
    },
  );

  it('keeps valid leases whatever the bound, and drops them from the R3 sweep once they expired', async () => {
    const w = await world(0);
    for (let i = 0; i < 10; i += 1) granted(await w.core.acquire(req({ resource: `r-${i}` })));
    expect(w.core.residency()).toEqual({ resident: 10, idle: 0 });
    await w.core.collectRequests();
    expect(w.core.residency().resident).toBe(10);
    w.clock.advance(TTL);
    await w.core.collectRequests();
    expect(w.core.residency()).toEqual({ resident: 0, idle: 0 });
  });

  it('L8: an expired lease stays in memory until it is fenced, then leaves', async () => {
    const w = await world(0, { fenceOnExpiry: true });
    const lease = granted(await w.core.acquire(req()));
    w.clock.advance(TTL);
    await w.core.collectRequests();
    expect(w.core.residency().resident).toBe(1); // dropping it now would lose the fence L8 owes
    expect(await w.core.fenceExpiredLeases()).toEqual([{ kind: 'fenced', resource: 'r', fence: lease.token + 1n }]);
    expect(w.core.residency().resident).toBe(0);
  });

  it('drops the least recently used idle entry first; an operation on an idle entry makes it the most recent', async () => {
    const w = await world(2);
    const leases: Record<string, LeaseView> = {};
    for (const resource of ['a', 'b']) {
      leases[resource] = granted(await w.core.acquire(req({ resource })));
      await w.core.release(holderOf(leases[resource]));
    }
    expect(await w.core.release(holderOf(leases.a!))).toEqual({ kind: 'released' }); // touches a
    await w.core.release(holderOf(granted(await w.core.acquire(req({ resource: 'c' })))));
    await w.core.describe('a');
    await w.core.describe('b');
    expect(w.store.reads).toEqual(['a', 'b', 'c', 'b']); // first touches, then b read back: it was dropped
  });

  it('restart: load() reads everything, keeps every lease L7 revives and drops the idle rest', async () => {
    const w = await world(0);
    const valid = granted(await w.core.acquire(req({ resource: 'valid' })));
    await w.core.release(holderOf(granted(await w.core.acquire(req({ resource: 'released' })))));
    w.sink.down = 'UNAVAILABLE';
    expect((await w.core.acquire(req({ resource: 'burned' }))).kind).toBe('sink-unavailable');
    w.sink.down = null;
    await w.restart();
    expect(w.core.residency()).toEqual({ resident: 1, idle: 0 });
    expect(await w.core.describe('valid')).toEqual({ lease: { ...valid, remainingMs: TTL }, lastToken: 1n });
    expect(await w.core.describe('released')).toEqual({ lease: null, lastToken: 1n });
    expect(granted(await w.core.acquire(req({ resource: 'burned' }))).token).toBe(2n); // L6: 1 was burned
    expect(w.store.reads).toEqual(['released', 'burned']);
  });
});

describe('V4: reading an entry back is serialized with every other operation on its resource', () => {
  it('an Acquire, a Describe and another Acquire of an evicted resource read it once, in turn', async () => {
    const w = await world(0);
    await w.core.release(holderOf(granted(await w.core.acquire(req()))));
    w.store.reads.length = 0;
    const atSink = gate();
    const sinkAnswers = gate();
    w.sink.beforeAdvance = async () => {
      atSink.open();
      await sinkAnswers.opened;
    };
    const first = w.core.acquire(req({ ownerId: 'bob' }));
    await atSink.opened;
    // While bob's Acquire holds the entry, Describe answers from memory at once.
    expect(await w.core.describe('r')).toEqual({ lease: null, lastToken: 1n });
    const second = w.core.acquire(req({ ownerId: 'carol' }));
    expect(await hasSettled(second)).toBe(false);
    sinkAnswers.open();
    const bob = granted(await first);
    expect(await second).toMatchObject({ kind: 'held', holder: { ownerId: 'bob', token: 2n } });
    expect(bob.token).toBe(2n);
    expect(w.store.reads).toEqual(['r']);
  });

  it('an idle entry in use by an operation is not dropped when other resources fill the cache', async () => {
    const w = await world(1);
    await w.core.release(holderOf(granted(await w.core.acquire(req({ resource: 'x' })))));
    const atSink = gate();
    const sinkAnswers = gate();
    w.sink.beforeAdvance = async (resource) => {
      if (resource !== 'x') return;
      atSink.open();
      await sinkAnswers.opened;
    };
    const slow = w.core.acquire(req({ resource: 'x', ownerId: 'bob' }));
    await atSink.opened; // token 2 is reserved in x's entry, which must stay
    for (const resource of ['y', 'z']) await w.core.release(holderOf(granted(await w.core.acquire(req({ resource })))));
    sinkAnswers.open();
    expect(granted(await slow).token).toBe(2n);
    expect((await w.core.describe('x')).lease?.token).toBe(2n);
  });
});

/** One step of a scenario: named answers to compare. */
type Scenario = (w: World) => Promise<Record<string, unknown>>;

/**
 * Each listed answer of the protocol, reached on a resource whose entry was
 * evicted (bound 0) and on one that stayed resident; `expected` shows the
 * answers are the ones the rules give.
 */
const scenarios: [string, { fenceOnExpiry?: boolean; disk?: () => MemoryDisk }, Scenario, Record<string, unknown>][] = [
  [
    'L6/T1: the next token is above every granted one; Describe shows the last',
    {},
    async (w) => {
      const first = granted(await w.core.acquire(req()));
      await w.core.release(holderOf(first));
      const described = await w.core.describe('r');
      const second = granted(await w.core.acquire(req({ ownerId: 'bob' })));
      return { first: first.token, described, second: second.token, after: await w.core.describe('r') };
    },
    {
      first: 1n,
      described: { lease: null, lastToken: 1n },
      second: 2n,
      after: { lease: expect.objectContaining({ token: 2n, ownerId: 'bob' }), lastToken: 2n },
    },
  ],
  [
    'L6: tokens burned by failed grants are never reused nor reported',
    {},
    async (w) => {
      w.sink.down = 'UNAVAILABLE';
      const failed = await w.core.acquire(req());
      const described = await w.core.describe('r');
      w.sink.down = null;
      return { failed: failed.kind, described, next: granted(await w.core.acquire(req())).token };
    },
    { failed: 'sink-unavailable', described: { lease: null, lastToken: 0n }, next: 2n },
  ],
  [
    'L4: Renew of a released, expired, superseded or foreign grant',
    {},
    async (w) => {
      const lease = granted(await w.core.acquire(req({ ttlMs: 5_000 })));
      await w.core.release(holderOf(lease));
      const released = await w.core.renew({ ...holderOf(lease), ttlMs: 0 });
      const foreign = await w.core.renew({ ...holderOf(lease), incarnation: 2n, ttlMs: 0 });
      const next = granted(await w.core.acquire(req({ ownerId: 'bob' })));
      w.clock.advance(TTL);
      await w.core.collectRequests(); // drops bob's expired lease from memory (bound 0)
      return {
        released,
        foreign,
        expired: await w.core.renew({ ...holderOf(next), ttlMs: 0 }),
        superseded: await w.core.renew({ ...holderOf(lease), ttlMs: 0 }),
      };
    },
    {
      released: { kind: 'expired' },
      foreign: { kind: 'not-holder' },
      expired: { kind: 'expired' },
      superseded: { kind: 'not-holder' },
    },
  ],
  [
    'L5: Release is idempotent, also once the lease expired; anyone else gets released=false',
    {},
    async (w) => {
      const lease = granted(await w.core.acquire(req()));
      w.clock.advance(TTL);
      await w.core.collectRequests();
      const expired = await w.core.release(holderOf(lease));
      return {
        expired,
        again: await w.core.release(holderOf(lease)),
        other: await w.core.release({ ...holderOf(lease), ownerId: 'bob' }),
        older: await w.core.release({ ...holderOf(lease), token: lease.token - 1n }),
      };
    },
    {
      expired: { kind: 'released' },
      again: { kind: 'released' },
      other: { kind: 'not-released' },
      older: { kind: 'not-released' },
    },
  ],
  [
    'R1/R2: replays of a released, renewed-then-released or superseded grant have remaining 0',
    {},
    async (w) => {
      const params = req({ ttlMs: 2_000 });
      const lease = granted(await w.core.acquire(params));
      await w.core.renew({ ...holderOf(lease), ttlMs: 7_000 }); // the grant's TTL now differs from the request's
      await w.core.release(holderOf(lease));
      const released = await w.core.acquire(params);
      const later = req({ ownerId: 'bob' });
      granted(await w.core.acquire(later));
      w.clock.advance(TTL);
      await w.core.collectRequests();
      return {
        released,
        superseded: await w.core.acquire(params),
        expired: await w.core.acquire(later),
        reused: await w.core.acquire({ ...params, ttlMs: 3_000 }),
      };
    },
    {
      released: { kind: 'replayed', lease: expect.objectContaining({ token: 1n, ttlMs: 7_000, remainingMs: 0 }) },
      superseded: { kind: 'replayed', lease: expect.objectContaining({ token: 1n, ttlMs: 2_000, remainingMs: 0 }) },
      expired: { kind: 'replayed', lease: expect.objectContaining({ token: 2n, remainingMs: 0 }) },
      reused: { kind: 'request-id-reused', requestId: expect.any(String) },
    },
  ],
  [
    'L6: a fence learned from FENCE_REGRESSION (memory only) is learned again after eviction; the grant is the same',
    {},
    async (w) => {
      w.sink.fences.set('r', 10n); // another coordinator moved it, and moves it again during the retry
      w.sink.beforeAdvance = (_resource, token) => {
        if (token === 11n) w.sink.fences.set('r', 30n);
      };
      const conflict = await w.core.acquire(req()); // the coordinator now knows of fence 30, its counter is at 11
      w.sink.beforeAdvance = null;
      const next = granted(await w.core.acquire(req()));
      return { conflict, next: next.token, burned: w.disk.counters.get('r') };
    },
    // The evicting side burns one more token (31 after 12) relearning the fence; nobody sees it.
    { conflict: { kind: 'fence-conflict', fence: 30n }, next: 31n, burned: 31n },
  ],
  [
    'L8: a fenced lease is over; the next grant goes above the fence',
    { fenceOnExpiry: true },
    async (w) => {
      const lease = granted(await w.core.acquire(req()));
      w.clock.advance(TTL);
      const fenced = await w.core.fenceExpiredLeases();
      return {
        fenced,
        renew: await w.core.renew({ ...holderOf(lease), ttlMs: 0 }),
        described: await w.core.describe('r'),
        next: granted(await w.core.acquire(req({ ownerId: 'bob' }))).token,
      };
    },
    {
      fenced: [{ kind: 'fenced', resource: 'r', fence: 2n }],
      renew: { kind: 'expired' },
      described: { lease: null, lastToken: 1n },
      next: 3n,
    },
  ],
  [
    'T1: the last token is granted, then the resource is exhausted for good',
    {
      disk: () => {
        const disk = new MemoryDisk();
        disk.counters.set('r', UINT64_MAX - 1n);
        return disk;
      },
    },
    async (w) => {
      const last = granted(await w.core.acquire(req()));
      await w.core.release(holderOf(last));
      return {
        last: last.token,
        after: await w.core.acquire(req()),
        described: await w.core.describe('r'),
      };
    },
    { last: UINT64_MAX, after: { kind: 'token-space-exhausted' }, described: { lease: null, lastToken: UINT64_MAX } },
  ],
];

describe('V4: an evicted entry answers exactly as a resident one', () => {
  it.each(scenarios)('%s', async (_name, options, scenario, expected) => {
    const evicting = await world(0, { fenceOnExpiry: options.fenceOnExpiry, disk: options.disk?.() });
    const resident = await world(NEVER_EVICT, { fenceOnExpiry: options.fenceOnExpiry, disk: options.disk?.() });
    nextId = 0; // the same request ids on both sides
    const answers = await scenario(evicting);
    nextId = 0;
    expect(answers).toEqual(await scenario(resident));
    // Both read a resource they never saw; only the evicting side reads one back after using it.
    expect(evicting.store.reads.length).toBeGreaterThan(resident.store.reads.length);
    expect(answers).toEqual(expected);
  });

  it.each([false, true])(
    'seeded random histories give the same answers with bound 0 and with no bound (fence-on-expiry %s)',
    async (fenceOnExpiry) => {
      let reads = 0;
      for (let seed = 1; seed <= 60; seed += 1) reads += await compareHistories(seed, 80, fenceOnExpiry);
      expect(reads).toBeGreaterThan(1_000); // the evicting side really does read entries back
    },
  );
});

/**
 * Drives a coordinator with bound 0 and one with no bound through the same
 * history (acquires, retries, renews, releases, Describe, time, restarts, a
 * failing sink, another coordinator moving fences, both sweeps), comparing
 * every answer. Returns how many entries the evicting side read back.
 */
async function compareHistories(seed: number, steps: number, fenceOnExpiry: boolean): Promise<number> {
  const rand = prng(seed);
  const worlds = [
    await world(0, { fenceOnExpiry, retentionMs: 3_000 }),
    await world(NEVER_EVICT, { fenceOnExpiry, retentionMs: 3_000 }),
  ];
  const requests: AcquireParams[] = [];
  const latest = new Map<string, LeaseView>();
  for (let step = 0; step < steps; step += 1) {
    const resource = rand.pick(['a', 'b', 'c']);
    const op = rand.pick([
      'acquire',
      'acquire',
      'retry',
      'renew',
      'release',
      'describe',
      'time',
      'time',
      'restart',
      'sink',
      'foreign',
      'sweep',
    ] as const);
    let params: AcquireParams | undefined;
    if (op === 'acquire' || (op === 'retry' && requests.length === 0)) {
      params = req({ resource, ownerId: rand.pick(['w1', 'w2']), ttlMs: rand.pick([500, 1_000]) });
      requests.push(params);
    } else if (op === 'retry') {
      const base = rand.pick(requests);
      params = rand.next() < 0.8 ? base : { ...base, ttlMs: base.ttlMs + 1 };
    }
    const known = latest.get(resource);
    const target = known && (rand.next() < 0.8 ? holderOf(known) : { ...holderOf(known), token: known.token - 1n });
    const ttlMs = rand.pick([0, 300, 1_000]);
    const elapsedMs = rand.int(0, 1_500);
    const fenceStep = BigInt(rand.int(1, 3));
    const answers: unknown[][] = [];
    for (const w of worlds) {
      const answer = (value: unknown) => answers.push([value]);
      switch (op) {
        case 'acquire':
        case 'retry':
          answer(await w.core.acquire(params!));
          break;
        case 'renew':
          answer(target && (await w.core.renew({ ...target, ttlMs })));
          break;
        case 'release':
          answer(target && (await w.core.release(target)));
          break;
        case 'describe':
          answer(await w.core.describe(resource));
          break;
        case 'time':
          w.clock.advance(elapsedMs);
          break;
        case 'restart':
          await w.restart();
          break;
        case 'sink':
          w.sink.down = w.sink.down ? null : 'UNAVAILABLE';
          break;
        case 'foreign':
          w.sink.fences.set(resource, w.sink.fence(resource) + fenceStep);
          break;
        case 'sweep':
          // As main.ts runs them: L8's only when it is on. L8's sweep visits resources
          // in memory order, which eviction changes: compare its outcomes sorted.
          answer({
            collected: await w.core.collectRequests(),
            fenced: fenceOnExpiry
              ? (await w.core.fenceExpiredLeases()).sort((x, y) => x.resource.localeCompare(y.resource))
              : [],
          });
          break;
      }
    }
    const [evicting, resident] = answers;
    expect(evicting, `seed ${seed}, step ${step}: ${op} ${resource}`).toEqual(resident);
    const outcome = evicting?.[0] as AcquireOutcome | undefined;
    if (outcome?.kind === 'granted') latest.set(outcome.lease.resource, outcome.lease);
    for (const r of ['a', 'b', 'c'])
      expect(await worlds[0]!.core.describe(r), `seed ${seed}, step ${step}: Describe ${r}`).toEqual(
        await worlds[1]!.core.describe(r),
      );
  }
  expect(worlds[0]!.core.residency().idle).toBe(0);
  return worlds[0]!.store.reads.length;
}
