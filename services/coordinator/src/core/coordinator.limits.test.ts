// V4 in the core: one owner cannot take the coordinator from others. Request
// records are bounded per owner and in all (R3), the Acquire rate per owner,
// each refusal is a protocol outcome (never a stall) logged once per owner,
// and what a quota holds is freed once it is no longer needed.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '@fencer/common';
import { Coordinator, type CoreLog } from './coordinator.js';
import { MemoryDisk, MemoryStore } from '../../test/doubles/memory-store.js';
import { MemorySink } from '../../test/doubles/memory-sink.js';
import { UNLIMITED } from '../../test/doubles/limits.js';
import type { CoreLimits } from './quota.js';
import type { AcquireParams } from './model.js';

const TTL = 1_000;
const RETENTION_MS = 60_000;

async function setup(limits: Partial<CoreLimits>) {
  const clock = new FakeClock();
  const warnings: object[] = [];
  const log: CoreLog = { debug() {}, info() {}, warn: (fields) => warnings.push(fields) };
  let ids = 0;
  const core = await Coordinator.open({
    clock,
    store: new MemoryStore(new MemoryDisk()),
    sink: new MemorySink(),
    newGrantId: () => `grant-${++ids}`,
    requestRetentionMs: RETENTION_MS,
    limits: { ...UNLIMITED, ...limits },
    fenceOnExpiry: false,
    log,
  });
  return { clock, core, warnings };
}

let nextId = 0;
function req(overrides: Partial<AcquireParams> = {}): AcquireParams {
  nextId += 1;
  return {
    requestId: `req-${nextId}`,
    resource: `r-${nextId}`,
    ownerId: 'mallory',
    incarnation: 1n,
    ttlMs: TTL,
    ...overrides,
  };
}

describe('V4/R3: request records are bounded', () => {
  it('refuses RECORDS_FULL (owner) once an owner keeps its quota of records, grants nothing, and lets others in', async () => {
    const { core } = await setup({ maxRecordsPerOwner: 3 });
    for (let i = 0; i < 3; i++) expect((await core.acquire(req())).kind).toBe('granted');
    const refused = req();
    expect(await core.acquire(refused)).toEqual({ kind: 'records-full', scope: 'owner', limit: 3 });
    expect((await core.describe(refused.resource)).lastToken).toBe(0n);
    expect((await core.acquire(req({ ownerId: 'alice' }))).kind).toBe('granted');
  });

  it('refuses RECORDS_FULL (service) once all owners together keep the bound', async () => {
    const { core } = await setup({ maxRequestRecords: 2 });
    expect((await core.acquire(req({ ownerId: 'a' }))).kind).toBe('granted');
    expect((await core.acquire(req({ ownerId: 'b' }))).kind).toBe('granted');
    expect(await core.acquire(req({ ownerId: 'c' }))).toEqual({ kind: 'records-full', scope: 'service', limit: 2 });
  });

  it('R1 first: a full owner still gets its retries replayed', async () => {
    const { core } = await setup({ maxRecordsPerOwner: 1 });
    const first = req();
    expect((await core.acquire(first)).kind).toBe('granted');
    expect((await core.acquire(req())).kind).toBe('records-full');
    expect((await core.acquire(first)).kind).toBe('replayed');
  });

  it('frees the quota once R3 collects the records: the owner may acquire again', async () => {
    const { core, clock } = await setup({ maxRecordsPerOwner: 2 });
    await core.acquire(req());
    await core.acquire(req());
    expect((await core.acquire(req())).kind).toBe('records-full');
    clock.advance(RETENTION_MS);
    expect(await core.collectRequests()).toBe(2);
    expect((await core.acquire(req())).kind).toBe('granted');
  });
});

describe('V4: the Acquire rate per owner is bounded', () => {
  it('refuses RATE_LIMITED past the burst, with the wait until the next token, and only for that owner', async () => {
    const { core, clock } = await setup({ maxAcquiresPerSecond: 4 });
    for (let i = 0; i < 4; i++) expect((await core.acquire(req())).kind).toBe('granted');
    expect(await core.acquire(req())).toEqual({ kind: 'rate-limited', retryAfterMs: 250 });
    expect((await core.acquire(req({ ownerId: 'alice' }))).kind).toBe('granted');
    clock.advance(250);
    expect((await core.acquire(req())).kind).toBe('granted');
    expect((await core.acquire(req())).kind).toBe('rate-limited');
  });

  it('counts LEASE_HELD attempts too, but never a replay (R1 comes first)', async () => {
    const { core } = await setup({ maxAcquiresPerSecond: 2 });
    const first = req({ resource: 'shared' });
    expect((await core.acquire(first)).kind).toBe('granted');
    expect((await core.acquire(req({ resource: 'shared' }))).kind).toBe('held');
    expect((await core.acquire(req())).kind).toBe('rate-limited');
    expect((await core.acquire(first)).kind).toBe('replayed');
  });
});

describe('V4: each limit is logged once per offender, not once per request', () => {
  it('logs one line per owner and limit until the owner is back within bounds', async () => {
    const { core, clock, warnings } = await setup({ maxAcquiresPerSecond: 1, maxRecordsPerOwner: 2 });
    await core.acquire(req());
    for (let i = 0; i < 50; i++) await core.acquire(req());
    await core.acquire(req({ ownerId: 'eve' }));
    for (let i = 0; i < 50; i++) await core.acquire(req({ ownerId: 'eve' }));
    expect(warnings).toEqual([
      expect.objectContaining({ ownerId: 'mallory', kind: 'rate-limited' }),
      expect.objectContaining({ ownerId: 'eve', kind: 'rate-limited' }),
    ]);
    clock.advance(1_000);
    expect((await core.acquire(req())).kind).toBe('granted'); // within bounds again: forgiven
    clock.advance(1_000);
    expect((await core.acquire(req())).kind).toBe('records-full');
    expect((await core.acquire(req())).kind).toBe('rate-limited');
    expect(warnings.slice(2)).toEqual([
      expect.objectContaining({ ownerId: 'mallory', kind: 'records-full', scope: 'owner' }),
      expect.objectContaining({ ownerId: 'mallory', kind: 'rate-limited' }),
    ]);
  });
});
