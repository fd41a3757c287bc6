// Named scenarios 1, 2, 3, 6 and 10: a holder loses its lease to a pause, a
// partition or latency; a successor takes over; the old holder's write is
// refused by the sink (or, with nobody taking over, still accepted: F5).
// Each ends with the checker finding the recorded history safe.
import { describe, expect, it } from 'vitest';
import { eventually } from '@fencer/testkit';
import { latencySpike, partition, pause } from '../../src/index.js';
import type { ScenarioWorker } from '../../src/index.js';
import { acquire, scenario, scripted, write } from './helpers.js';

const processOf = (worker: ScenarioWorker) => ({ pid: worker.child.pid!, name: worker.owner });

// Many steps on real processes: a loaded machine makes each slower, never wrong.
describe('takeover scenarios', { timeout: 120_000 }, () => {
  it('1. pause takeover: A is SIGSTOPped past its TTL, B takes over, A resumes and its write is refused', async () => {
    const s = await scenario('pause');
    const a = await s.worker('worker-a', scripted('job', 800));
    const b = await s.worker('worker-b', scripted('job', 10_000));
    const tokenA = await acquire(a);
    expect(await write(a, 'a-1', 'A1')).toMatchObject({ event: 'written', outcome: 'applied' });

    const thaw = await s.inject(pause(processOf(a)));
    await s.leaseGone('job');
    const tokenB = await acquire(b);
    await thaw();

    expect(tokenB).toBeGreaterThan(tokenA);
    expect((await a.next('lease-lost')).reason).toBe('LOCAL_DEADLINE_PASSED');
    expect(await write(a, 'a-2', 'A2')).toMatchObject({ event: 'refused', reason: 'STALE_TOKEN' });
    expect(await write(b, 'b-1', 'B1')).toMatchObject({ event: 'written', outcome: 'applied' });
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('2. partition worker ↔ coordinator: takeover, heal, and the stale write is refused', async () => {
    const s = await scenario('partition');
    const a = await s.worker('worker-a', scripted('job', 800));
    const b = await s.worker('worker-b', scripted('job', 10_000));
    await acquire(a);
    const heal = await s.inject(partition(a.links.coordinator));
    // A cannot renew: its library gives the lease up at its local deadline,
    // and the coordinator lets it expire on its own clock.
    expect((await a.next('lease-lost')).reason).toBe('LOCAL_DEADLINE_PASSED');
    await s.leaseGone('job');
    await acquire(b);
    await heal();
    expect(await write(a, 'a-late', 'A')).toMatchObject({ event: 'refused', reason: 'STALE_TOKEN' });
    expect(await write(b, 'b-1', 'B')).toMatchObject({ event: 'written', outcome: 'applied' });
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('3a. expiry without takeover: the expired holder’s write is still accepted (F5)', async () => {
    const s = await scenario('expiry');
    const a = await s.worker('worker-a', scripted('job', 800));
    const token = await acquire(a);
    const thaw = await s.inject(pause(processOf(a)));
    await s.leaseGone('job');
    await thaw();
    expect((await a.next('lease-lost')).reason).toBe('LOCAL_DEADLINE_PASSED');
    expect(await s.admin.sink.getFence('job')).toBe(token);
    expect(await write(a, 'a-late', 'A')).toMatchObject({ event: 'written', outcome: 'applied' });
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('3b. expiry without takeover, with --fence-on-expiry: the expired holder’s write is refused (L8)', async () => {
    const s = await scenario('expiry_fenced', { coordinatorFlags: ['--fence-on-expiry'] });
    const a = await s.worker('worker-a', scripted('job', 800));
    const token = await acquire(a);
    const thaw = await s.inject(pause(processOf(a)));
    // The coordinator moves the fence itself once the lease has expired.
    await eventually(async () => ((await s.admin.sink.getFence('job')) !== token ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: 'the fence to move on expiry',
    });
    await thaw();
    expect(await write(a, 'a-late', 'A')).toMatchObject({ event: 'refused', reason: 'STALE_TOKEN' });
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('6. a renew delayed past the TTL by latency: the signal fires and the later write is refused', async () => {
    const s = await scenario('slow_renew');
    const a = await s.worker('worker-a', scripted('job', 800));
    const b = await s.worker('worker-b', scripted('job', 10_000));
    await acquire(a);
    const heal = await s.inject(latencySpike(a.links.coordinator, { latencyMs: 1_500 }));
    // The renewal cannot come back before the lease would end.
    expect(['LOCAL_DEADLINE_PASSED', 'LEASE_EXPIRED']).toContain((await a.next('lease-lost')).reason);
    await s.leaseGone('job');
    await acquire(b);
    await heal();
    expect(await write(a, 'a-late', 'A')).toMatchObject({ event: 'refused', reason: 'STALE_TOKEN' });
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });

  it("10. an old holder's write held back on its sink link past the new holder's writes is refused", async () => {
    const s = await scenario('held_back');
    const a = await s.worker('worker-a', scripted('job', 800, 10_000));
    const b = await s.worker('worker-b', scripted('job', 10_000));
    await acquire(a);
    expect(await write(a, 'a-1', 'A1')).toMatchObject({ event: 'written' });
    // A's next write leaves now and arrives in 4 s; meanwhile A is cut off
    // from the coordinator, loses its lease, and B takes over and writes.
    const healLatency = await s.inject(latencySpike(a.links.sink, { latencyMs: 4_000, direction: 'upstream' }));
    a.send('write a-2 A2');
    const healPartition = await s.inject(partition(a.links.coordinator));
    await s.leaseGone('job');
    await acquire(b);
    expect(await write(b, 'b-1', 'B1')).toMatchObject({ event: 'written', outcome: 'applied' });
    const held = await a.next(['written', 'refused'], { timeoutMs: 20_000 });
    expect(held).toMatchObject({ event: 'refused', reason: 'STALE_TOKEN' });
    // The held-back write really was sent before B's grant, and ended after B's write.
    const ops = s.operations;
    const aWrite = ops.find((op) => op.method === 'Write' && op.request.result_id === 'a-2')!;
    const bWrite = ops.find((op) => op.method === 'Write' && op.request.result_id === 'b-1')!;
    expect(aWrite.invokedMs).toBeLessThan(bWrite.invokedMs);
    expect(aWrite.completedMs).toBeGreaterThan(bWrite.completedMs);
    await healLatency();
    await healPartition();
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });
});
