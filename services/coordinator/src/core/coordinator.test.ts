import { describe, expect, it } from 'vitest';
import { eventually, gate, hasSettled } from '@fencer/testkit';
import { FakeClock, StoreFailedError, UINT64_MAX } from '@fencer/common';
import { UNLIMITED } from '../../test/doubles/limits.js';
import { Coordinator, type AcquireOutcome, type CoreLog } from './coordinator.js';
import { MemoryDisk, MemoryStore } from '../../test/doubles/memory-store.js';
import { MemorySink } from '../../test/doubles/memory-sink.js';
import type { AcquireParams, LeaseView } from './model.js';

const quiet: CoreLog = { debug() {}, info() {}, warn() {} };
const TTL = 1_000;

async function setup(options: { retentionMs?: number; disk?: MemoryDisk; sink?: MemorySink; clock?: FakeClock } = {}) {
  const clock = options.clock ?? new FakeClock();
  const disk = options.disk ?? new MemoryDisk();
  const sink = options.sink ?? new MemorySink();
  let ids = 0;
  const open = () =>
    Coordinator.open({
      clock,
      store: new MemoryStore(disk),
      sink,
      newGrantId: () => `grant-${++ids}`,
      requestRetentionMs: options.retentionMs ?? 3_600_000,
      limits: UNLIMITED,
      fenceOnExpiry: true,
      log: quiet,
    });
  const core = await open();
  return { clock, disk, sink, core, reopen: open };
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

describe('L2: one valid lease per resource', () => {
  it('refuses Acquire by anyone while a lease is valid, naming the holder and the time left', async () => {
    const { core, clock, sink } = await setup();
    const lease = granted(await core.acquire(req()));
    clock.advance(400);
    for (const other of [
      req({ ownerId: 'bob' }),
      req({ ownerId: 'alice' }),
      req({ ownerId: 'alice', incarnation: 2n }),
    ]) {
      const outcome = await core.acquire(other);
      expect(outcome).toMatchObject({
        kind: 'held',
        holder: { ownerId: 'alice', incarnation: 1n, token: lease.token },
        remainingMs: 600,
      });
    }
    expect(sink.advances).toHaveLength(1);
  });

  it('grants a larger token once the lease has expired (L1: at now == expires_at)', async () => {
    const { core, clock } = await setup();
    const first = granted(await core.acquire(req()));
    clock.advance(TTL - 1);
    expect((await core.acquire(req({ ownerId: 'bob' }))).kind).toBe('held');
    clock.advance(1);
    const second = granted(await core.acquire(req({ ownerId: 'bob' })));
    expect(second.token).toBeGreaterThan(first.token);
  });
});

describe('L3: reserve, fence, record, reply', () => {
  it('advances the sink fence after the token is durably reserved and before the lease is recorded', async () => {
    const { core, disk, sink } = await setup();
    const seen: unknown[] = [];
    sink.beforeAdvance = async (resource, token) => {
      seen.push({
        reserved: disk.counters.get(resource),
        durable: disk.journal.at(-1),
        recorded: disk.grants.get(resource)?.token ?? null,
        described: (await core.describe(resource)).lease,
      });
      expect(token).toBe(1n);
    };
    const lease = granted(await core.acquire(req()));
    expect(seen).toEqual([
      { reserved: 1n, durable: { op: 'reserve', key: 'r', durable: true }, recorded: null, described: null },
    ]);
    expect(disk.journal.map((w) => [w.op, w.durable])).toEqual([
      ['reserve', true],
      ['grant', true],
    ]);
    expect(sink.fence('r')).toBe(lease.token);
    expect(disk.grants.get('r')?.token).toBe(lease.token);
  });

  it("A5: every AdvanceFence names the holder the token goes to, the FENCE_REGRESSION retry's too", async () => {
    const { core, sink, clock } = await setup();
    sink.fences.set('r', 41n); // the first attempt is refused, the retry above it moves the fence
    const alice = granted(await core.acquire(req({ ownerId: 'alice' })));
    clock.advance(TTL);
    const bob = granted(await core.acquire(req({ ownerId: 'bob' })));
    expect(sink.received.map(({ token, ownerId }) => [token, ownerId])).toEqual([
      [1n, 'alice'],
      [alice.token, 'alice'],
      [bob.token, 'bob'],
    ]);
  });

  it('grants nothing when the sink fails, and a later Acquire gets a larger token', async () => {
    const { core, sink, disk } = await setup();
    sink.down = 'UNAVAILABLE';
    const request = req();
    expect(await core.acquire(request)).toEqual({ kind: 'sink-unavailable', sinkCode: 'UNAVAILABLE' });
    expect(await core.describe('r')).toEqual({ lease: null, lastToken: 0n });
    expect(disk.grants.size).toBe(0);
    expect(disk.requests.size).toBe(0);
    expect(disk.counters.get('r')).toBe(1n); // burned, never reused (L6)

    sink.down = null;
    const lease = granted(await core.acquire(request)); // same request id: nothing was recorded for it
    expect(lease.token).toBe(2n);
    expect(sink.fence('r')).toBe(2n);
  });

  it('grants nothing when recording fails after the fence moved, and never reuses that token', async () => {
    const { core, sink, disk, reopen } = await setup();
    sink.beforeAdvance = () => {
      disk.failNext = new Error('disk full');
    };
    const request = req();
    await expect(core.acquire(request)).rejects.toThrow('disk full');
    expect(sink.fence('r')).toBe(1n);
    sink.beforeAdvance = null;
    // T3: the process stops; a restart resumes above the burned token.
    const restarted = await reopen();
    expect(await restarted.describe('r')).toEqual({ lease: null, lastToken: 0n });
    expect(granted(await restarted.acquire(request)).token).toBe(2n);
  });

  it('T3: once a store write failed, every call is refused with the failure, even those memory could answer', async () => {
    const { core, disk } = await setup();
    const lease = granted(await core.acquire(req({ resource: 'held' })));
    disk.failNext = new Error('No space left on device');
    const failed = core.acquire(req({ resource: 'other' }));
    await expect(failed).rejects.toBeInstanceOf(StoreFailedError);
    const failure = await failed.catch((error: unknown) => error);
    // A Renew that keeps the TTL and a Describe write nothing: refused all the same.
    await expect(core.renew({ ...holderOf(lease), ttlMs: 0 })).rejects.toBe(failure);
    await expect(core.describe('held')).rejects.toBe(failure);
    await expect(core.release(holderOf(lease))).rejects.toBe(failure);
    await expect(core.nextToken('held')).rejects.toBe(failure);
    expect(disk.grants.get('held')?.ended).toBeNull();
  });

  it('on FENCE_REGRESSION raises the counter durably above the fence and retries once', async () => {
    const { core, sink, disk } = await setup();
    sink.fences.set('r', 41n); // e.g. this coordinator's data dir was lost
    const lease = granted(await core.acquire(req()));
    expect(lease.token).toBe(42n);
    expect(disk.counters.get('r')).toBe(42n);
    expect(sink.advances.map((a) => a.token)).toEqual([42n]);
  });

  it('fails with FENCE_CONFLICT when the fence is beyond the token again, granting nothing', async () => {
    const { core, sink } = await setup();
    const attempts: bigint[] = [];
    // Another coordinator keeps advancing the fence just ahead of us.
    sink.beforeAdvance = (resource, token) => {
      attempts.push(token);
      sink.fences.set(resource, token + 5n);
    };
    expect(await core.acquire(req())).toEqual({ kind: 'fence-conflict', fence: 12n });
    expect(attempts).toEqual([1n, 7n]); // the retry goes above the fence it was told (6)
    expect(await core.describe('r')).toEqual({ lease: null, lastToken: 0n });
    sink.beforeAdvance = null;
    expect(granted(await core.acquire(req())).token).toBe(13n);
  });
});

describe('R1/R2: idempotent Acquire', () => {
  it("answers the current holder's retry with its grant, never LEASE_HELD, remaining_ms computed now", async () => {
    const { core, clock, sink } = await setup();
    const request = req();
    const lease = granted(await core.acquire(request));
    clock.advance(300);
    expect(await core.acquire(request)).toEqual({ kind: 'replayed', lease: { ...lease, remainingMs: TTL - 300 } });
    expect(sink.advances).toHaveLength(1);
  });

  it.each([
    ['expired', async (ctx: Awaited<ReturnType<typeof setup>>) => ctx.clock.advance(TTL)],
    [
      'released',
      async (ctx: Awaited<ReturnType<typeof setup>>, lease: LeaseView) =>
        void (await ctx.core.release(holderOf(lease))),
    ],
    [
      'superseded',
      async (ctx: Awaited<ReturnType<typeof setup>>) => {
        ctx.clock.advance(TTL);
        granted(await ctx.core.acquire(req({ ownerId: 'bob' })));
      },
    ],
  ] as const)('replays with remaining_ms 0 once the grant is %s', async (_name, end) => {
    const ctx = await setup();
    const request = req();
    const lease = granted(await ctx.core.acquire(request));
    await end(ctx, lease);
    expect(await ctx.core.acquire(request)).toEqual({ kind: 'replayed', lease: { ...lease, remainingMs: 0 } });
    expect(ctx.sink.advances.filter((a) => a.token === lease.token)).toHaveLength(1);
  });

  it.each([
    ['resource', { resource: 'other' }],
    ['owner_id', { ownerId: 'bob' }],
    ['incarnation', { incarnation: 2n }],
    ['ttl_ms', { ttlMs: TTL + 1 }],
  ] as const)('refuses the same request id with a different %s (R2), changing nothing', async (_field, change) => {
    const { core, sink } = await setup();
    const request = req();
    const lease = granted(await core.acquire(request));
    expect(await core.acquire({ ...request, ...change })).toEqual({
      kind: 'request-id-reused',
      requestId: request.requestId,
    });
    expect(sink.advances).toHaveLength(1);
    expect((await core.describe('r')).lease).toEqual(lease);
    expect(await core.describe('other')).toEqual({ lease: null, lastToken: 0n });
  });
});

describe('R3: request records are kept for the retention, then collected', () => {
  it('keeps records across a restart and collects them once retention has passed', async () => {
    const ctx = await setup({ retentionMs: 10_000 });
    const request = req();
    const lease = granted(await ctx.core.acquire(request));
    ctx.clock.advance(9_999);
    expect(await ctx.core.collectRequests()).toBe(0);
    expect((await ctx.core.acquire(request)).kind).toBe('replayed');

    ctx.clock.advance(1);
    expect(await ctx.core.collectRequests()).toBe(1);
    expect(ctx.disk.requests.has(request.requestId)).toBe(false);
    // Collected: the id is new again (and the old lease long expired), so it gets a new token.
    expect(granted(await ctx.core.acquire(request)).token).toBeGreaterThan(lease.token);
  });

  it("R1 over R3: a record whose grant is still the valid lease is kept past retention, so the holder's retry is replayed, never LEASE_HELD", async () => {
    const ctx = await setup({ retentionMs: 10_000 });
    const request = req();
    const lease = granted(await ctx.core.acquire(request));
    for (let elapsedMs = 0; elapsedMs < 12_000; elapsedMs += 900) {
      ctx.clock.advance(900);
      expect((await ctx.core.renew({ ...holderOf(lease), ttlMs: 0 })).kind).toBe('renewed');
    }
    expect(await ctx.core.collectRequests()).toBe(0);
    expect(await ctx.core.acquire(request)).toEqual({ kind: 'replayed', lease: { ...lease, remainingMs: TTL } }); // renewed just now
    expect(ctx.disk.requests.has(request.requestId)).toBe(true);

    // Once the lease is over, the retention that has long passed applies.
    await ctx.core.release(holderOf(lease));
    expect(await ctx.core.collectRequests()).toBe(1);
    expect(ctx.disk.requests.has(request.requestId)).toBe(false);
  });

  it('R3: a request id past retention is new again even when its old resource is held by someone else', async () => {
    const ctx = await setup({ retentionMs: 10_000 });
    const request = req();
    granted(await ctx.core.acquire(request));
    ctx.clock.advance(10_000);
    const bob = granted(await ctx.core.acquire(req({ ownerId: 'bob', ttlMs: 60_000 })));
    const outcome = await ctx.core.acquire(request);
    expect(outcome).toMatchObject({ kind: 'held', holder: { ownerId: 'bob', token: bob.token } });
  });

  it('counts retention from the restart after a reopen (kept longer, never shorter)', async () => {
    const ctx = await setup({ retentionMs: 10_000 });
    const request = req();
    granted(await ctx.core.acquire(request));
    ctx.clock.advance(9_000);
    const reopened = await ctx.reopen();
    ctx.clock.advance(9_000);
    expect(await reopened.collectRequests()).toBe(0);
    expect((await reopened.acquire(request)).kind).toBe('replayed');
    ctx.clock.advance(1_000);
    expect(await reopened.collectRequests()).toBe(1);
  });
});

describe('L4: Renew', () => {
  it('is refused at exactly the TTL boundary (L1) and allowed one ms before, extending to now + ttl', async () => {
    const { core, clock } = await setup();
    const lease = granted(await core.acquire(req()));
    clock.advance(TTL - 1);
    expect(await core.renew({ ...holderOf(lease), ttlMs: 0 })).toEqual({
      kind: 'renewed',
      lease: { ...lease, remainingMs: TTL },
    });
    clock.advance(TTL);
    expect(await core.renew({ ...holderOf(lease), ttlMs: 0 })).toEqual({ kind: 'expired' });
  });

  it('cannot revive an expired lease even when nobody took over', async () => {
    const { core, clock } = await setup();
    const lease = granted(await core.acquire(req()));
    clock.advance(TTL + 5_000);
    expect(await core.renew({ ...holderOf(lease), ttlMs: 0 })).toEqual({ kind: 'expired' });
    expect(await core.renew({ ...holderOf(lease), ttlMs: 60_000 })).toEqual({ kind: 'expired' });
    expect(await core.describe('r')).toEqual({ lease: null, lastToken: lease.token });
  });

  it('answers NOT_LEASE_HOLDER before LEASE_EXPIRED once a successor exists', async () => {
    const { core, clock } = await setup();
    const old = granted(await core.acquire(req()));
    clock.advance(TTL);
    granted(await core.acquire(req({ ownerId: 'bob' })));
    expect(await core.renew({ ...holderOf(old), ttlMs: 0 })).toEqual({ kind: 'not-holder' });
  });

  it.each([
    ['owner_id', { ownerId: 'mallory' }],
    ['incarnation', { incarnation: 2n }],
    ['token', { token: 2n }],
    ['resource', { resource: 'never-granted' }],
  ] as const)('refuses a renew with the wrong %s as NOT_LEASE_HOLDER, even after expiry', async (_field, change) => {
    const { core, clock } = await setup();
    const lease = granted(await core.acquire(req()));
    expect(await core.renew({ ...holderOf(lease), ttlMs: 0, ...change })).toEqual({ kind: 'not-holder' });
    clock.advance(TTL);
    expect(await core.renew({ ...holderOf(lease), ttlMs: 0, ...change })).toEqual({ kind: 'not-holder' });
  });

  it('adopts a non-zero ttl_ms as the TTL from then on; zero keeps it; L7 uses it', async () => {
    const ctx = await setup();
    const lease = granted(await ctx.core.acquire(req()));
    const renewed = await ctx.core.renew({ ...holderOf(lease), ttlMs: 5_000 });
    expect(renewed).toEqual({ kind: 'renewed', lease: { ...lease, ttlMs: 5_000, remainingMs: 5_000 } });
    ctx.clock.advance(4_000);
    expect(await ctx.core.renew({ ...holderOf(lease), ttlMs: 0 })).toMatchObject({
      lease: { ttlMs: 5_000, remainingMs: 5_000 },
    });
    const reopened = await ctx.reopen();
    expect((await reopened.describe('r')).lease).toMatchObject({ ttlMs: 5_000, remainingMs: 5_000 });
  });

  it.each([
    ['longer', 60_000],
    ['shorter', 200],
  ])(
    'L4/L7: a %s TTL is synced before the renew is answered, so a crash right after it cannot bring the old TTL back',
    async (_how, ttlMs) => {
      const ctx = await setup();
      const lease = granted(await ctx.core.acquire(req()));
      const before = ctx.disk.journal.length;
      expect(await ctx.core.renew({ ...holderOf(lease), ttlMs })).toMatchObject({
        kind: 'renewed',
        lease: { ttlMs, remainingMs: ttlMs },
      });
      expect(ctx.disk.journal.slice(before)).toEqual([{ op: 'ttl', key: 'r', durable: true }]);
      ctx.disk.crash(); // power loss: whatever was not synced is gone
      const restarted = await ctx.reopen();
      expect((await restarted.describe('r')).lease).toEqual({ ...lease, ttlMs, remainingMs: ttlMs });
    },
  );

  it('L4: a renew that keeps the TTL (0, or the same value) writes nothing at all', async () => {
    const { core, disk, clock } = await setup();
    const lease = granted(await core.acquire(req()));
    const before = disk.journal.length;
    for (const ttlMs of [0, TTL, 0]) {
      clock.advance(500);
      expect(await core.renew({ ...holderOf(lease), ttlMs })).toEqual({
        kind: 'renewed',
        lease: { ...lease, remainingMs: TTL },
      });
    }
    expect(disk.journal.length).toBe(before);
  });

  it('L4: if the new TTL cannot be written, the renew fails and the lease keeps its old TTL', async () => {
    const { core, disk, clock } = await setup();
    const lease = granted(await core.acquire(req()));
    clock.advance(400);
    disk.failNext = new Error('disk full');
    await expect(core.renew({ ...holderOf(lease), ttlMs: 60_000 })).rejects.toThrow('disk full');
    expect(disk.grants.get('r')?.ttlMs).toBe(TTL);
  });

  it('refuses to renew a released lease (it is over)', async () => {
    const { core } = await setup();
    const lease = granted(await core.acquire(req()));
    await core.release(holderOf(lease));
    expect(await core.renew({ ...holderOf(lease), ttlMs: 0 })).toEqual({ kind: 'expired' });
  });
});

describe('L5: Release', () => {
  it('frees the resource at once, expired or not; the next Acquire gets a larger token', async () => {
    for (const elapsedMs of [0, TTL + 1]) {
      const { core, clock } = await setup();
      const lease = granted(await core.acquire(req()));
      clock.advance(elapsedMs);
      expect(await core.release(holderOf(lease))).toEqual({ kind: 'released' });
      expect(await core.describe('r')).toEqual({ lease: null, lastToken: lease.token });
      expect(granted(await core.acquire(req({ ownerId: 'bob' }))).token).toBe(lease.token + 1n);
    }
  });

  it("returns released=false (never an error) for anything but the latest grant's holder", async () => {
    const { core, clock } = await setup();
    const old = granted(await core.acquire(req()));
    for (const change of [{ ownerId: 'bob' }, { incarnation: 9n }, { token: 7n }, { resource: 'x' }]) {
      expect(await core.release({ ...holderOf(old), ...change })).toEqual({ kind: 'not-released' });
    }
    expect((await core.describe('r')).lease?.token).toBe(old.token);
    clock.advance(TTL);
    const successor = granted(await core.acquire(req({ ownerId: 'bob' })));
    expect(await core.release(holderOf(old))).toEqual({ kind: 'not-released' });
    expect((await core.describe('r')).lease?.token).toBe(successor.token);
  });
});

describe('L6: tokens strictly increase forever', () => {
  it('across failed grants and restarts', async () => {
    const ctx = await setup();
    const tokens: bigint[] = [];
    for (let round = 0; round < 3; round += 1) {
      const core = round === 0 ? ctx.core : await ctx.reopen();
      ctx.sink.down = 'DEADLINE_EXCEEDED';
      expect((await core.acquire(req({ resource: 'r' }))).kind).toBe('sink-unavailable');
      ctx.sink.down = null;
      const lease = granted(await core.acquire(req()));
      tokens.push(lease.token);
      await core.release(holderOf(lease));
    }
    expect(tokens).toEqual([2n, 4n, 6n]);
  });

  it('resumes above the sink fence after losing the data directory', async () => {
    const ctx = await setup();
    for (let i = 0; i < 3; i += 1) {
      const lease = granted(await ctx.core.acquire(req()));
      await ctx.core.release(holderOf(lease));
    }
    const fresh = await setup({ sink: ctx.sink, clock: ctx.clock }); // a new, empty disk
    expect(granted(await fresh.core.acquire(req())).token).toBe(4n);
  });
});

describe('T1: the token space ends at 2^64−1', () => {
  it('grants the last token, then refuses for good without storing or sending anything past it', async () => {
    const disk = new MemoryDisk();
    disk.counters.set('r', UINT64_MAX - 1n); // as left by a long life, reloaded at start-up
    const { core, clock, sink } = await setup({ disk });
    const last = granted(await core.acquire(req()));
    expect(last.token).toBe(UINT64_MAX);
    clock.advance(TTL);
    const writes = disk.journal.length;
    for (let i = 0; i < 3; i += 1)
      expect(await core.acquire(req({ ownerId: 'bob' }))).toEqual({ kind: 'token-space-exhausted' });
    expect(disk.journal).toHaveLength(writes);
    expect(disk.counters.get('r')).toBe(UINT64_MAX);
    expect(sink.advances.map((a) => a.token)).toEqual([UINT64_MAX]);
    expect(await core.describe('r')).toEqual({ lease: null, lastToken: UINT64_MAX });
  });

  it('a sink fence of 2^64−1 (another coordinator, or a direct AdvanceFence) is exhaustion, not a conflict or an outage', async () => {
    const { core, disk, sink } = await setup();
    sink.fences.set('r', UINT64_MAX);
    expect(await core.acquire(req())).toEqual({ kind: 'token-space-exhausted' });
    // One token burned learning the fence (L6), then nothing more: no retry.
    expect(disk.journal.map((w) => w.op)).toEqual(['reserve']);
    expect(disk.counters.get('r')).toBe(1n);
    expect(await core.acquire(req())).toEqual({ kind: 'token-space-exhausted' });
    expect(disk.journal).toHaveLength(1);
    expect(sink.fence('r')).toBe(UINT64_MAX);
    expect(sink.advances).toEqual([]);
  });

  it('L8 leaves an expired holder of the last token alone: there is no token to fence it with', async () => {
    const disk = new MemoryDisk();
    disk.counters.set('r', UINT64_MAX - 1n);
    const { core, clock, sink } = await setup({ disk });
    const last = granted(await core.acquire(req()));
    clock.advance(TTL);
    expect(await core.fenceExpiredLeases()).toEqual([]);
    expect(await core.fenceIfExpired('r')).toEqual({ kind: 'not-due', resource: 'r' });
    expect(disk.counters.get('r')).toBe(UINT64_MAX);
    expect(sink.judgeWrite('r', last.token)).toBe('accepted'); // F5: expiry alone does not fence
  });
});

describe('L7: restart keeps every unreleased grant valid for a full TTL', () => {
  it('treats surviving grants as valid for a full TTL from the restart', async () => {
    const ctx = await setup();
    const lease = granted(await ctx.core.acquire(req()));
    const released = granted(await ctx.core.acquire(req({ resource: 'free' })));
    await ctx.core.release(holderOf(released));
    ctx.clock.advance(TTL * 5); // long down: the process cannot know
    const core = await ctx.reopen();
    expect((await core.describe('r')).lease).toEqual({ ...lease, remainingMs: TTL });
    expect(await core.describe('free')).toEqual({ lease: null, lastToken: released.token });
    ctx.clock.advance(TTL - 1);
    expect((await core.acquire(req({ ownerId: 'bob' }))).kind).toBe('held');
    expect((await core.renew({ ...holderOf(lease), ttlMs: 0 })).kind).toBe('renewed');
  });
});

describe('L8: fence on expiry', () => {
  it('moves the fence past an expired holder with no successor, without granting', async () => {
    const { core, clock, sink } = await setup();
    const lease = granted(await core.acquire(req()));
    clock.advance(TTL - 1);
    expect(await core.fenceExpiredLeases()).toEqual([]);
    expect(sink.judgeWrite('r', lease.token)).toBe('accepted');
    clock.advance(1);
    expect(await core.fenceExpiredLeases()).toEqual([{ kind: 'fenced', resource: 'r', fence: lease.token + 1n }]);
    expect(sink.judgeWrite('r', lease.token)).toBe('STALE_TOKEN');
    expect(await core.describe('r')).toEqual({ lease: null, lastToken: lease.token }); // the fence token is not a grant
    // A5: granted to no one, the fence stays bound to the expired holder, so
    // it admits no identity the fence it replaced did not.
    expect(sink.received.at(-1)).toMatchObject({ token: lease.token + 1n, ownerId: 'alice' });
    expect(await core.fenceExpiredLeases()).toEqual([]); // once is enough
    expect(granted(await core.acquire(req({ ownerId: 'bob' }))).token).toBe(lease.token + 2n);
  });

  it('leaves released leases and leases with a successor alone', async () => {
    const { core, clock, sink } = await setup();
    const a = granted(await core.acquire(req({ resource: 'a' })));
    await core.release(holderOf(a));
    granted(await core.acquire(req({ resource: 'b' })));
    clock.advance(TTL);
    const successor = granted(await core.acquire(req({ resource: 'b', ownerId: 'bob' })));
    expect(await core.fenceExpiredLeases()).toEqual([]);
    expect(sink.fence('b')).toBe(successor.token);
  });

  it('retries with back-off while the sink is unreachable', async () => {
    const { core, clock, sink } = await setup();
    const lease = granted(await core.acquire(req()));
    clock.advance(TTL);
    sink.down = 'UNAVAILABLE';
    expect(await core.fenceExpiredLeases()).toEqual([
      { kind: 'retry-later', resource: 'r', sinkCode: 'UNAVAILABLE', retryInMs: 100 },
    ]);
    expect(await core.fenceExpiredLeases()).toEqual([]); // backing off
    clock.advance(100);
    expect(await core.fenceExpiredLeases()).toMatchObject([{ kind: 'retry-later', retryInMs: 200 }]);
    sink.down = null;
    clock.advance(200);
    expect(await core.fenceExpiredLeases()).toMatchObject([{ kind: 'fenced' }]);
    expect(sink.fence('r')).toBeGreaterThan(lease.token);
  });

  it('does not revive a fenced lease after a restart', async () => {
    const ctx = await setup();
    granted(await ctx.core.acquire(req()));
    ctx.clock.advance(TTL);
    await ctx.core.fenceExpiredLeases();
    const core = await ctx.reopen();
    expect((await core.describe('r')).lease).toBeNull();
    expect((await core.acquire(req({ ownerId: 'bob' }))).kind).toBe('granted');
  });
});

describe('A4: forced release', () => {
  it('fences the holder off before the lease ends, binds the fence to the admin, and the next grant goes above it', async () => {
    const { core, sink, reopen } = await setup();
    const lease = granted(await core.acquire(req()));
    const outcome = await core.forceRelease('r', lease.token, 'root');
    expect(outcome).toEqual({ kind: 'forced', fence: lease.token + 1n, lastToken: lease.token });
    expect(sink.advances.at(-1)).toMatchObject({ resource: 'r', token: lease.token + 1n, ownerId: 'root' });
    expect(await core.describe('r')).toEqual({ lease: null, lastToken: lease.token });
    expect((await (await reopen()).describe('r')).lease).toBeNull(); // L7 does not revive a fenced grant
    expect(granted(await core.acquire(req({ ownerId: 'bob' }))).token).toBe(lease.token + 2n);
  });

  it('is retry-safe: a retry, or a token that is not the latest grant, changes nothing and never cuts off a successor', async () => {
    const { core, sink } = await setup();
    const lease = granted(await core.acquire(req()));
    expect((await core.forceRelease('r', lease.token, 'root')).kind).toBe('forced');
    expect(await core.forceRelease('r', lease.token, 'root')).toEqual({ kind: 'unchanged', lastToken: lease.token });
    const successor = granted(await core.acquire(req({ ownerId: 'bob' })));
    const advances = sink.advances.length;
    expect(await core.forceRelease('r', lease.token, 'root')).toEqual({
      kind: 'unchanged',
      lastToken: successor.token,
    });
    expect(await core.forceRelease('never', 1n, 'root')).toEqual({ kind: 'unchanged', lastToken: 0n });
    expect(sink.advances).toHaveLength(advances);
    expect((await core.describe('r')).lease?.token).toBe(successor.token);
  });

  it('ends nothing when the sink does not confirm the fence', async () => {
    const { core, sink } = await setup();
    const lease = granted(await core.acquire(req()));
    sink.down = 'UNAVAILABLE';
    expect(await core.forceRelease('r', lease.token, 'root')).toEqual({
      kind: 'sink-unavailable',
      sinkCode: 'UNAVAILABLE',
    });
    expect((await core.describe('r')).lease?.token).toBe(lease.token);
    sink.down = null;
    expect((await core.forceRelease('r', lease.token, 'root')).kind).toBe('forced');
  });
});

describe('S1/S2 under concurrency', () => {
  it('many concurrent Acquires of one resource mint exactly one token', async () => {
    const { core, sink } = await setup();
    let calls = 0;
    sink.beforeAdvance = async () => {
      calls += 1;
      await new Promise((resolve) => setImmediate(resolve)); // let every other Acquire pile up
    };
    const outcomes = await Promise.all(Array.from({ length: 25 }, (_, i) => core.acquire(req({ ownerId: `w${i}` }))));
    expect(outcomes.filter((o) => o.kind === 'granted')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'held')).toHaveLength(24);
    expect(calls).toBe(1);
    expect(sink.advances).toHaveLength(1);
  });

  it('many concurrent retries of one request id mint exactly one token', async () => {
    const { core, sink } = await setup();
    sink.beforeAdvance = () => new Promise((resolve) => setImmediate(resolve));
    const request = req();
    const outcomes = await Promise.all(Array.from({ length: 25 }, () => core.acquire(request)));
    expect(outcomes.filter((o) => o.kind === 'granted')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'replayed')).toHaveLength(24);
    expect(new Set(outcomes.map((o) => (o.kind === 'granted' || o.kind === 'replayed' ? o.lease.token : -1n)))).toEqual(
      new Set([1n]),
    );
    expect(sink.advances).toHaveLength(1);
  });

  it('one request id raced for two different resources yields one token (S2), the other is REQUEST_ID_REUSED', async () => {
    const { core, sink } = await setup();
    sink.beforeAdvance = () => new Promise((resolve) => setImmediate(resolve));
    const request = req();
    const outcomes = await Promise.all([core.acquire(request), core.acquire({ ...request, resource: 'other' })]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['granted', 'request-id-reused']);
    expect(sink.advances).toHaveLength(1);
  });

  it('L8/L7: an Acquire waits while an L8 sweep of the same resource is at the sink, so the sweep cannot overwrite the new grant', async () => {
    const ctx = await setup();
    const old = granted(await ctx.core.acquire(req()));
    ctx.clock.advance(TTL);
    const sent: bigint[] = [];
    const sweepAtSink = gate();
    const sweepAnswers = gate();
    ctx.sink.beforeAdvance = async (_resource, token) => {
      sent.push(token);
      if (sent.length > 1) return;
      sweepAtSink.open();
      await sweepAnswers.opened;
    };
    const sweep = ctx.core.fenceExpiredLeases();
    await sweepAtSink.opened;
    const acquiring = ctx.core.acquire(req({ ownerId: 'bob' }));
    expect(await hasSettled(acquiring)).toBe(false);
    expect(sent).toEqual([old.token + 1n]); // the Acquire has not even reserved a token yet

    sweepAnswers.open();
    expect(await sweep).toEqual([{ kind: 'fenced', resource: 'r', fence: old.token + 1n }]);
    const bob = granted(await acquiring);
    expect(sent).toEqual([old.token + 1n, old.token + 2n]);
    expect(bob.token).toBe(old.token + 2n);
    expect(ctx.disk.grants.get('r')).toMatchObject({ ownerId: 'bob', token: bob.token, ended: null });
    expect((await (await ctx.reopen()).describe('r')).lease).toEqual({ ...bob, remainingMs: TTL }); // L7 keeps bob's lease
  });

  it('R3/S2: collection racing a re-acquisition of a collected request id cannot drop the new record', async () => {
    const { core, clock, sink, disk } = await setup({ retentionMs: 10_000 });
    const request = req();
    granted(await core.acquire(request));
    clock.advance(10_000); // expired and past retention: the id is new again
    const atSink = gate();
    const sinkAnswers = gate();
    sink.beforeAdvance = async () => {
      atSink.open();
      await sinkAnswers.opened;
    };
    const reacquired = core.acquire(request);
    await atSink.opened;
    const collecting = core.collectRequests(); // saw the old record as collectable
    sinkAnswers.open();
    const lease = granted(await reacquired);
    expect(await collecting).toBe(0);
    expect(disk.requests.get(request.requestId)?.token).toBe(lease.token);
    sink.beforeAdvance = null;
    expect(await core.acquire(request)).toEqual({ kind: 'replayed', lease }); // S2: its retry gets the same token
  });

  it('resources are independent: concurrent Acquires of different resources all succeed', async () => {
    const { core, sink } = await setup();
    const outcomes = await Promise.all(['a', 'b', 'c'].map((resource) => core.acquire(req({ resource }))));
    expect(outcomes.map((o) => granted(o).token)).toEqual([1n, 1n, 1n]);
    expect([...sink.fences.values()]).toEqual([1n, 1n, 1n]);
  });
});

describe('close(): shutdown never cuts an operation in half', () => {
  it('waits for an Acquire that is waiting on the sink, lets it record its grant, then refuses new calls', async () => {
    const { core, sink, disk } = await setup();
    const atSink = gate();
    const sinkAnswers = gate();
    sink.beforeAdvance = async () => {
      atSink.open();
      await sinkAnswers.opened;
    };
    const inFlight = core.acquire(req());
    await atSink.opened;
    const closing = core.close();
    expect(await hasSettled(closing)).toBe(false);
    await expect(core.acquire(req({ resource: 'other' }))).rejects.toThrow('closed');
    await expect(core.renew({ resource: 'r', ownerId: 'alice', incarnation: 1n, token: 1n, ttlMs: 0 })).rejects.toThrow(
      'closed',
    );

    sinkAnswers.open();
    await closing;
    expect(granted(await inFlight).token).toBe(1n);
    expect(disk.grants.get('r')?.token).toBe(1n); // written before close() resolved, so before the store closes
    expect(disk.counters.has('other')).toBe(false);
  });

  it('L8: a sweep settles only once every resource it started has, even when one of them failed', async () => {
    const { core, clock, sink, disk } = await setup();
    granted(await core.acquire(req({ resource: 'a' })));
    granted(await core.acquire(req({ resource: 'b' })));
    clock.advance(TTL);
    const atSink = { a: gate(), b: gate() };
    const answers = { a: gate(), b: gate() };
    sink.beforeAdvance = async (resource) => {
      atSink[resource as 'a' | 'b'].open();
      await answers[resource as 'a' | 'b'].opened;
    };
    const sweep = core.fenceExpiredLeases();
    await Promise.all([atSink.a.opened, atSink.b.opened]);
    disk.failNext = new Error('disk full'); // a's end of grant is the next write
    answers.a.open();
    // Once a's write has failed the store, the core refuses every call (T3).
    await eventually(() =>
      core.describe('a').then(
        () => undefined,
        () => true,
      ),
    );
    expect(await hasSettled(sweep)).toBe(false); // a has failed, b is still at the sink
    answers.b.open();
    await expect(sweep).rejects.toThrow('disk full');
    expect(disk.grants.get('b')?.ended).toBeNull(); // T3: b's write met the failed store
  });
});
