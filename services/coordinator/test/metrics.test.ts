// --metrics: the coordinator's RPCs are counted by method and code on a
// Prometheus /metrics endpoint. The registry is process-wide and other
// tests in this process may have counted calls too, so the test asserts on
// what its own calls added.
import { describe, expect, it } from 'vitest';
import { coordinatorApi, coordinatorClient, ok, refused } from '@fencer/testkit';
import { fresh, startTestCoordinator, useSinkProcess } from './helpers.js';

const sink = useSinkProcess();

/** The value of fencer_rpc_calls_total for the coordinator's Acquire with `code`; 0 when not yet counted. */
async function acquireCalls(metricsAddress: string, code: string): Promise<number> {
  const response = await fetch(`http://${metricsAddress}/metrics`);
  expect(response.status).toBe(200);
  const line = new RegExp(
    `^fencer_rpc_calls_total\\{service="coordinator",method="Acquire",code="${code}"\\} (\\d+)$`,
    'm',
  );
  return Number(line.exec(await response.text())?.[1] ?? 0);
}

describe('metrics', () => {
  it('serves /metrics with per-method, per-code call counts', async () => {
    const started = await startTestCoordinator(sink.address, { metrics: '127.0.0.1:0' });
    const client = coordinatorClient(started.coordinator.address);
    try {
      const api = coordinatorApi(client);
      const metrics = started.coordinator.metricsAddress!;
      const before = { ok: await acquireCalls(metrics, 'OK'), aborted: await acquireCalls(metrics, 'ABORTED') };
      const resource = fresh('metrics');
      ok(await api.acquire({ request_id: fresh('q'), resource, owner_id: 'alice', incarnation: '1', ttl_ms: '1000' }));
      refused(
        await api.acquire({ request_id: fresh('q'), resource, owner_id: 'bob', incarnation: '1', ttl_ms: '1000' }),
      );
      expect(await acquireCalls(metrics, 'OK')).toBe(before.ok + 1);
      expect(await acquireCalls(metrics, 'ABORTED')).toBe(before.aborted + 1);
    } finally {
      client.close();
      await started.coordinator.stop();
      started.remove();
    }
  });
});
