// H2's gate checked twice, in-process on a fake clock: a leader whose leader
// lease runs out while an Acquire is between the sink and the store answers
// it NOT_LEADER, never as granted; the grant it may have written is found
// by the retry with the same request id once it leads again (H4, R1).
import { describe, expect, it } from 'vitest';
import { FakeClock } from '@fencer/common';
import { CODE, coordinatorApi, coordinatorClient, eventually, gate, ok, refused } from '@fencer/testkit';
import { coordinatorConfig, startCoordinator } from '../src/index.js';
import { acquireRequest, freshPrefix, TEST_LEADER_TTL_MS, useReplicaRig } from './replica-helpers.js';

const rig = useReplicaRig();

describe('H2: the gate before answering', () => {
  it('an Acquire whose leader lease ran out while it waited on the sink is NOT_LEADER; the retry with its request id gets the same token', async () => {
    const clock = new FakeClock();
    const held = gate();
    const reachedSink = gate();
    let holdNext = true;
    const config = coordinatorConfig({
      listen: '127.0.0.1:0',
      data: '/nonexistent/not-used-with-etcd',
      sink: rig.sink.address,
      insecure: true,
      requestRetentionMs: 3_600_000,
      sinkDeadlineMs: 2_000,
      store: 'etcd',
      etcd: [rig.etcd.endpoint],
      etcdPrefix: freshPrefix(),
      leaderTtlMs: TEST_LEADER_TTL_MS,
    });
    const replica = await startCoordinator(config, {
      clock,
      // Holds the first AdvanceFence until the test opens the gate.
      wrapSink: (sink) => ({
        advanceFence: async (advance) => {
          if (holdNext) {
            holdNext = false;
            reachedSink.open();
            await held.opened;
          }
          return sink.advanceFence(advance);
        },
      }),
    });
    const client = coordinatorClient(replica.address);
    const api = coordinatorApi(client);
    try {
      const resource = `gate-${Date.now()}`;
      const request = acquireRequest(resource, 'alice');
      // The fake clock stands still, so once elected it stays confirmed until the test moves it.
      await eventually(async () => ((await api.describe(resource)).ok ? true : undefined), { what: 'leading' });
      const pending = api.acquire(request);
      await reachedSink.opened;
      clock.advance(TEST_LEADER_TTL_MS);
      // The clock keeps moving until the answer: a keepalive sent after one
      // step (every 300 ms real time) would confirm the leadership again for
      // a while, rightly, and a loaded CI machine once let one land between
      // the step and the answer. The next step, 5 ms later, outruns it.
      const ticking = setInterval(() => clock.advance(TEST_LEADER_TTL_MS), 5);
      held.open();
      const answered = await pending.finally(() => clearInterval(ticking));
      const refusal = refused(answered);
      expect([refusal.code, refusal.reason]).toEqual([CODE.UNAVAILABLE, 'NOT_LEADER']);
      // Its fence did move: the call was not "nothing happened" (why NOT_LEADER is retried with the same id).
      expect(await rig.sink.fence(resource)).toBe('1');

      // It deposes itself, campaigns, and leads again under a new term that loads what the old one wrote.
      const retried = await eventually(async () => {
        const result = await api.acquire(request);
        return result.ok ? result.value : undefined;
      });
      expect(retried.replayed).toBe(true);
      expect(retried.lease!.token).toBe('1');
      expect(ok(await api.describe(resource)).last_token).toBe('1');
    } finally {
      client.close();
      await replica.stop();
    }
  });
});
