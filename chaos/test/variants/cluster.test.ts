// A cluster runs the variants it is given in `binaries`, through every
// start, kill and restart: the chaos suite's negative controls run on the
// very cluster its real runs use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '@fencer/supervisor';
import { coordinatorApi, coordinatorClient, eventually, ok, sinkApi, sinkClient, tempDir } from '@fencer/testkit';
import { variantBin } from '@fencer/variants';

let dir: ReturnType<typeof tempDir>;
let cluster: Cluster;
beforeAll(async () => {
  dir = tempDir('fencer-variants-cluster-');
  cluster = await startCluster({
    data: dir.path,
    sinkListen: '127.0.0.1:0',
    coordinatorListen: '127.0.0.1:0',
    insecure: true,
    stopGraceMs: 5_000,
    binaries: { sink: variantBin('lenient-sink'), coordinator: variantBin('no-request-records-coordinator') },
  });
});
afterAll(async () => {
  await cluster?.stop();
  dir?.remove();
});

describe('a cluster with binaries', () => {
  it('starts, kills and restarts the given variants on their addresses', async () => {
    const coordinatorChannel = coordinatorClient(cluster.links.workersToCoordinator);
    const sinkChannel = sinkClient(cluster.links.workersToSink);
    const coordinator = coordinatorApi(coordinatorChannel);
    const sink = sinkApi(sinkChannel);
    const request = { request_id: 'r-1', resource: 'job', owner_id: 'worker-a', incarnation: '1', ttl_ms: '60000' };
    const holder = { resource: 'job', owner_id: 'worker-a', incarnation: '1' };
    /** Acquires with `request`, writes under a token never issued, releases: the token and whether the write applied. */
    const round = async (resultId: string) => {
      const token = ok(await coordinator.acquire(request)).lease!.token;
      const invented = String(BigInt(token) + 1n);
      const write = await sink.write('job', invented, resultId, 'invented');
      ok(await coordinator.release({ ...holder, token }));
      return { token, applied: write.ok && write.value.outcome === 'APPLIED' };
    };
    try {
      // The lenient sink applies an invented token; the forgetful coordinator answers one request id anew.
      expect(await round('first')).toEqual({ token: '1', applied: true });
      expect(await round('second')).toEqual({ token: '2', applied: true });

      await cluster.kill('sink');
      await cluster.restart('sink');
      await cluster.restart('coordinator');
      // Calls fail UNAVAILABLE until the channels have reconnected through the proxies.
      await eventually(
        async () =>
          ((await coordinator.describe('job')).ok && (await sink.fence('job').catch(() => undefined))) || undefined,
        { what: 'both services to answer again' },
      );
      // A restarted coordinator resumes past the token block it had reserved
      // (T1 asks only for a strictly larger token), so not necessarily 3.
      const third = await round('third');
      expect(third.applied).toBe(true);
      expect(BigInt(third.token)).toBeGreaterThan(2n);
    } finally {
      coordinatorChannel.close();
      sinkChannel.close();
    }
  });
});
