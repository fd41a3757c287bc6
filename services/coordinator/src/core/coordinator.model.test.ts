// Randomized histories against a reference model: acquires (fresh and
// retried request ids), renews, releases, time passing, restarts, a failing
// sink, another coordinator moving fences, and L8 sweeps. After every step
// the safety invariants must hold. Seeded, so a failure names its seed.
import { describe, expect, it } from 'vitest';
import { prng } from '@fencer/testkit';
import { FakeClock } from '@fencer/common';
import { UNLIMITED } from '../../test/doubles/limits.js';
import { Coordinator, type CoreLog } from './coordinator.js';
import { MemoryDisk, MemoryStore } from '../../test/doubles/memory-store.js';
import { MemorySink } from '../../test/doubles/memory-sink.js';
import type { AcquireParams } from './model.js';

const quiet: CoreLog = { debug() {}, info() {}, warn() {} };

interface ModelGrant {
  ownerId: string;
  incarnation: bigint;
  token: bigint;
  ttlMs: number;
  expiresAtMs: number;
  ended: boolean;
}

async function runHistory(seed: number, steps: number) {
  const rand = prng(seed);
  const clock = new FakeClock(0);
  const disk = new MemoryDisk();
  const sink = new MemorySink();
  let grantIds = 0;
  const open = () =>
    Coordinator.open({
      clock,
      store: new MemoryStore(disk),
      sink,
      newGrantId: () => `g${++grantIds}`,
      requestRetentionMs: 10 ** 9,
      limits: UNLIMITED,
      fenceOnExpiry: true,
      log: quiet,
    });
  let core = await open();
  // L6: every token this coordinator ever sends to the sink (granted, burned or
  // L8's) is above every token it sent before for that resource.
  const sent = new Map<string, bigint>();
  let reused: string | null = null;
  sink.beforeAdvance = (r, token) => {
    if (token <= (sent.get(r) ?? 0n)) reused ??= `token ${token} of ${r} sent again (last ${sent.get(r)})`;
    sent.set(r, token);
  };

  const latest = new Map<string, ModelGrant>();
  const tokenOfRequest = new Map<string, bigint>();
  const paramsOfRequest = new Map<string, AcquireParams>();
  const granted = new Map<string, bigint[]>();
  const valid = (g: ModelGrant | undefined) => g !== undefined && !g.ended && clock.nowMs() < g.expiresAtMs;
  let requestIds = 0;

  for (let step = 0; step < steps; step += 1) {
    const where = `seed ${seed}, step ${step}`;
    const resource = rand.pick(['a', 'b']);
    const op = rand.pick([
      'acquire',
      'acquire',
      'retry',
      'renew',
      'release',
      'time',
      'time',
      'restart',
      'sink',
      'foreign',
      'sweep',
    ] as const);
    switch (op) {
      case 'acquire':
      case 'retry': {
        const known = [...paramsOfRequest.values()];
        let params: AcquireParams;
        if (op === 'retry' && known.length > 0) {
          const base = rand.pick(known);
          params = rand.next() < 0.8 ? base : { ...base, ttlMs: base.ttlMs + 1 }; // mostly same params, sometimes R2
        } else {
          params = {
            requestId: `q${++requestIds}`,
            resource,
            ownerId: rand.pick(['w1', 'w2', 'w3']),
            incarnation: 1n,
            ttlMs: rand.pick([100, 500, 1_000]),
          };
        }
        const before = latest.get(params.resource);
        const wasValid = valid(before);
        const outcome = await core.acquire(params);
        switch (outcome.kind) {
          case 'granted': {
            expect(tokenOfRequest.has(params.requestId), `${where}: S2, request id granted twice`).toBe(false);
            expect(wasValid, `${where}: L2, granted while a lease was valid`).toBe(false);
            const history = granted.get(params.resource) ?? [];
            expect(
              history.every((t) => t < outcome.lease.token),
              `${where}: L6/S1, token not above all earlier grants`,
            ).toBe(true);
            expect(sink.fence(params.resource), `${where}: L3, fence must equal the new grant`).toBe(
              outcome.lease.token,
            );
            granted.set(params.resource, [...history, outcome.lease.token]);
            tokenOfRequest.set(params.requestId, outcome.lease.token);
            paramsOfRequest.set(params.requestId, params);
            latest.set(params.resource, {
              ...params,
              token: outcome.lease.token,
              expiresAtMs: clock.nowMs() + params.ttlMs,
              ended: false,
            });
            break;
          }
          case 'replayed':
            expect(outcome.lease.token, `${where}: R1 replay of another token`).toBe(
              tokenOfRequest.get(params.requestId),
            );
            expect(outcome.lease.remainingMs > 0, `${where}: R1 remaining_ms`).toBe(
              valid(latest.get(params.resource)) && latest.get(params.resource)!.token === outcome.lease.token,
            );
            break;
          case 'held':
            expect(wasValid, `${where}: LEASE_HELD without a valid lease`).toBe(true);
            break;
          case 'request-id-reused':
            expect(paramsOfRequest.get(params.requestId), `${where}: R2 for an unknown id`).toBeDefined();
            expect(paramsOfRequest.get(params.requestId)).not.toEqual(params);
            break;
          case 'sink-unavailable':
            expect(sink.down).not.toBeNull();
            break;
          case 'fence-conflict':
            throw new Error(`${where}: FENCE_CONFLICT with no concurrent coordinator`);
          case 'token-space-exhausted':
            throw new Error(`${where}: T1 exhaustion with tokens far below 2^64−1`);
          case 'rate-limited':
          case 'records-full':
            throw new Error(`${where}: a V4 limit with none configured`);
        }
        break;
      }
      case 'renew':
      case 'release': {
        const g = latest.get(resource);
        if (!g) break;
        const target = rand.next() < 0.8 ? g : { ...g, token: g.token - 1n };
        const holder = { resource, ownerId: target.ownerId, incarnation: target.incarnation, token: target.token };
        if (op === 'renew') {
          const ttlMs = rand.pick([0, 300, 1_000]);
          const outcome = await core.renew({ ...holder, ttlMs });
          const expected = target !== g ? 'not-holder' : valid(g) ? 'renewed' : 'expired';
          expect(outcome.kind, `${where}: L4`).toBe(expected);
          if (outcome.kind === 'renewed') {
            g.ttlMs = ttlMs || g.ttlMs;
            g.expiresAtMs = clock.nowMs() + g.ttlMs;
          }
        } else {
          const outcome = await core.release(holder);
          expect(outcome.kind, `${where}: L5`).toBe(target === g ? 'released' : 'not-released');
          if (target === g) g.ended = true;
        }
        break;
      }
      case 'time':
        clock.advance(Math.floor(rand.next() * 1_200));
        break;
      case 'restart':
        core = await open();
        // L7: every unended latest grant is valid for a full TTL from now.
        for (const g of latest.values()) if (!g.ended) g.expiresAtMs = clock.nowMs() + g.ttlMs;
        break;
      case 'sink':
        sink.down = sink.down ? null : rand.pick(['UNAVAILABLE', 'DEADLINE_EXCEEDED']);
        break;
      case 'foreign':
        // Another coordinator (split brain) moves the fence ahead.
        sink.fences.set(resource, sink.fence(resource) + BigInt(1 + Math.floor(rand.next() * 3)));
        break;
      case 'sweep':
        for (const outcome of await core.fenceExpiredLeases()) {
          const g = latest.get(outcome.resource)!;
          expect(valid(g), `${where}: L8 fenced a valid lease`).toBe(false);
          if (outcome.kind === 'fenced') {
            expect(sink.fence(outcome.resource) > g.token, `${where}: L8 fence not past the holder`).toBe(true);
            g.ended = true;
          }
        }
        break;
    }
    expect(reused, `seed ${seed}, step ${step}: L6`).toBeNull();
    // The sink's fence never goes backwards and is never below a granted token (S3).
    for (const [r, tokens] of granted) expect(sink.fence(r) >= tokens.at(-1)!, `${where}: S3`).toBe(true);
  }
  return [...granted.values()].reduce((n, tokens) => n + tokens.length, 0);
}

describe('randomized histories (S1, S2, S3, L2–L8)', () => {
  it('hold every invariant over 150 seeded histories', async () => {
    let grants = 0;
    for (let seed = 1; seed <= 150; seed += 1) grants += await runHistory(seed, 80);
    expect(grants).toBeGreaterThan(500); // the histories really do grant
  });
});
