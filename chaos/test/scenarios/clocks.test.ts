// Clock skew under libfaketime (the clock-skew nemesis): L1 has the
// coordinator judge leases on its own clock alone. A coordinator whose clock
// runs fast ends leases early in real time, which L1 allows: the lock model
// takes the bound the run reports, and S1–S6 hold as ever. A worker whose
// clock runs slow keeps believing in a lease the coordinator has ended: the
// sink fences it (F1), and it learns so from the sink.
import { describe, expect, it } from 'vitest';
import { checkHistory, clockSkew } from '../../src/index.js';
import { acquire, scenario, scripted, write } from './helpers.js';

// Real processes, and waits of a few TTLs: a loaded machine makes each step slower, never wrong.
describe('clock scenarios', { timeout: 120_000 }, () => {
  it('a coordinator clock running fast (x2, then x4) and then slow (x0.5): takeovers on its clock, and the checker passes', async () => {
    const s = await scenario('clock_coordinator', { clocks: ['coordinator'] });
    const clock = s.clocks.coordinator!;
    // Both renew every second of their own (real) time: a third of the TTL.
    const a = await s.worker('worker-a', scripted('job', 3_000));
    const b = await s.worker('worker-b', scripted('job', 3_000));

    // x2: a TTL of 3 s lasts 1.5 s, still longer than a renewal takes to come.
    let heal = await s.inject(clockSkew(clock, 'coordinator', 2));
    const first = await acquire(a);
    b.send('acquire');
    expect(await b.next('refused')).toMatchObject({ reason: 'LEASE_HELD' });
    a.send('release');
    await a.next('released');
    const second = await acquire(b);
    await heal();

    // x4: it lasts 0.75 s, so B's lease runs out between two of its renewals and A takes over.
    heal = await s.inject(clockSkew(clock, 'coordinator', 4));
    await s.leaseGone('job');
    const third = await acquire(a);
    expect(await write(b, 'b-late', 'B')).toMatchObject({ event: 'refused', reason: 'STALE_TOKEN' });
    await heal();

    // x0.5: it lasts 6 s; whoever holds the lease keeps it.
    heal = await s.inject(clockSkew(clock, 'coordinator', 0.5));
    a.send('release'); // if A's lease has not run out already
    await a.next('released');
    const fourth = await acquire(b);
    a.send('acquire');
    expect(await a.next('refused')).toMatchObject({ reason: 'LEASE_HELD' });
    expect(await write(b, 'b-1', 'B1')).toMatchObject({ event: 'written', outcome: 'applied' });
    await heal();

    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
    expect(fourth).toBeGreaterThan(third);
    const { history, violations } = await s.verdict();
    expect(violations).toEqual([]);
    // The bound is what lets the early end pass: on a clock taken at the real rate, A's grant came while B's lease was valid.
    expect(checkHistory(history).violations.map((violation) => violation.rule)).toEqual(['LOCK']);
  });

  it('a worker whose clock runs four times too slow writes on past its lease: the sink refuses it, and tells it first', async () => {
    const s = await scenario('clock_worker');
    // A renews every 2 s of its own time: 8 s of real time, long after the coordinator ended its 6 s lease.
    const a = await s.worker('worker-a', scripted('job', 6_000), { clock: true });
    const b = await s.worker('worker-b', scripted('job', 10_000));
    const heal = await s.inject(clockSkew(a.clock!, 'worker-a', 0.25));
    const tokenA = await acquire(a);
    expect(await write(a, 'a-1', 'A1')).toMatchObject({ event: 'written', outcome: 'applied' });

    await s.leaseGone('job');
    const tokenB = await acquire(b);
    expect(tokenB).toBeGreaterThan(tokenA);
    expect(await write(b, 'b-1', 'B1')).toMatchObject({ event: 'written', outcome: 'applied' });
    // On its own clock A's lease has 4.5 s left, and its first renewal is not due yet.
    expect(await write(a, 'a-2', 'A2')).toMatchObject({ event: 'refused', reason: 'STALE_TOKEN' });
    // Its library gave the lease up on that answer, the first it had that the lease was over.
    expect(a.events.filter((event) => event.event === 'lease-lost')).toMatchObject([{ reason: 'STALE_TOKEN' }]);
    await heal();
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });
});
