// Named scenarios 4 and 5: grants under faults. A lost grant receipt is
// survived by retrying with the same request id (R1); a coordinator cut off
// from the sink grants nothing, and after the heal exactly once (L3).
import { describe, expect, it } from 'vitest';
import { eventually } from '@fencer/testkit';
import { partition, replyLoss } from '../../src/index.js';
import { connectFirst, scenario, scripted, write } from './helpers.js';

// Many steps on real processes: a loaded machine makes each slower, never wrong.
describe('grant scenarios', { timeout: 120_000 }, () => {
  it('4. dropped grant receipt: the retries keep the request id, get the same token, and the fence moved once', async () => {
    const s = await scenario('receipt');
    const b = await s.worker('worker-b', scripted('job', 10_000, 300));
    // B's connection is up before replies start vanishing: a connection
    // opened under the toxic would never finish its HTTP/2 handshake, and
    // no request would reach the coordinator at all.
    await connectFirst(b);
    const heal = await s.inject(replyLoss(b.links.coordinator));
    b.send('acquire');
    const granted = await eventually(async () => (await s.admin.coordinator.describe('job')).lease, {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: 'the grant at the coordinator',
    });
    await b.next('call', { where: (call) => call.method === 'Acquire' && call.outcome !== 'ok' });
    await heal();
    const acquired = await b.next('acquired');

    expect([BigInt(acquired.token), acquired.replayed]).toEqual([granted.token, true]);
    const attempts = s.operations.filter((op) => op.method === 'Acquire');
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(attempts.map((op) => op.request.request_id))).toEqual(new Set([acquired.requestId]));
    expect((await s.admin.coordinator.describe('job')).lastToken).toBe(granted.token);
    expect(await s.admin.sink.getFence('job')).toBe(granted.token);
    expect(await write(b, 'b-1', 'B')).toMatchObject({ event: 'written', outcome: 'applied' });
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('5. coordinator ↔ sink partition during Acquire: no grant; after the heal, exactly one', async () => {
    const s = await scenario('sink_cut');
    const b = await s.worker('worker-b', scripted('job', 10_000));
    const heal = await s.inject(partition(s.link('coordinatorToSink')));
    b.send('acquire');
    // The coordinator could not make the fence durable, so it granted nothing (L3).
    const refused = await b.next('call', { where: (call) => call.method === 'Acquire' && call.outcome !== 'ok' });
    expect(refused.outcome).toBe('SINK_UNAVAILABLE');
    expect((await s.admin.coordinator.describe('job')).lease).toBeUndefined();
    expect(await s.admin.sink.getFence('job')).toBe(0n);
    await heal();
    // The library retries (same request id) until the healed link lets a grant through.
    const token = await b.next('acquired', { timeoutMs: 20_000 }).then((event) => BigInt(event.token));

    const grants = s.operations.filter((op) => op.method === 'Acquire' && op.outcome.type === 'ok');
    expect(grants).toHaveLength(1);
    const { lease, lastToken } = await s.admin.coordinator.describe('job');
    expect([lease?.token, lastToken, await s.admin.sink.getFence('job')]).toEqual([token, token, token]);
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });
});
