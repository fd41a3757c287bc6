// --metrics: the coordinator's RPCs are counted by method and code on a
// Prometheus /metrics endpoint.
import { describe, expect, it } from 'vitest';
import { coordinatorApi, coordinatorClient, ok, refused } from '@fencer/testkit';
import { fresh, startTestCoordinator, useSinkProcess } from './helpers.js';

const sink = useSinkProcess();

describe('metrics', () => {
  it('serves /metrics with per-method, per-code call counts', async () => {
    const started = await startTestCoordinator(sink.address, { metrics: '127.0.0.1:0' });
    const client = coordinatorClient(started.coordinator.address);
    try {
      const api = coordinatorApi(client);
      const resource = fresh('metrics');
      ok(await api.acquire({ request_id: fresh('q'), resource, owner_id: 'alice', incarnation: '1', ttl_ms: '1000' }));
      refused(
        await api.acquire({ request_id: fresh('q'), resource, owner_id: 'bob', incarnation: '1', ttl_ms: '1000' }),
      );
      const response = await fetch(`http://${started.coordinator.metricsAddress}/metrics`);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).toMatch(/fencer_rpc_calls_total\{service="coordinator",method="Acquire",code="OK"\} 1/);
      expect(text).toMatch(/fencer_rpc_calls_total\{service="coordinator",method="Acquire",code="ABORTED"\} 1/);
    } finally {
      client.close();
      await started.coordinator.stop();
      started.remove();
    }
  });
});
