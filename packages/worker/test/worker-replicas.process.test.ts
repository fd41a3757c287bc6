// `fencer worker --coordinator a,b,...` (H7) as a real process. The replicas
// in the list are stand-ins (startScriptedCoordinator: real grpc-js servers
// on real sockets, scripted per test), because the replicas of
// services/coordinator are built apart; the leader they name is a real
// `fencer coordinator` on LevelDB, which is not in the list itself: only
// following NOT_LEADER reaches it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type Cluster, type WorkerProcess } from '@fencer/supervisor';
import { runFencer, startScriptedCoordinator, startTestCluster, type ScriptedCoordinator } from '@fencer/testkit';

let cluster: Cluster;
let stopCluster: () => Promise<void>;
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  ({ cluster, stop: stopCluster } = await startTestCluster('fencer-worker-replicas-'));
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await stopCluster?.();
});

async function standIn(script: ScriptedCoordinator['script']) {
  const replica = await startScriptedCoordinator(script);
  stops.push(() => replica.close());
  return replica;
}

describe('fencer worker over coordinator replicas (H7)', () => {
  it('follows NOT_LEADER to the leader: granted there, under the request id the standby saw', async () => {
    const leader = cluster.coordinator.ready.address;
    const electing = await standIn(() => ({ notLeader: null }));
    const standby = await standIn(() => ({ notLeader: leader }));
    const worker: WorkerProcess = await startWorker({
      coordinator: `${electing.address},${standby.address}`,
      sink: cluster.links.workersToSink,
      owner: 'worker-a',
      tokenFile: cluster.credentials!.workerTokenFiles['worker-a']!,
      args: ['--commands', '--resource', 'replicated', '--ttl-ms', '5000'],
    });
    stops.push(() => worker.stop());

    worker.send('acquire');
    const acquired = await worker.next('acquired');
    expect(acquired.replayed).toBe(false);
    for (const replica of [electing, standby])
      expect(replica.calls.map((call) => [call.method, call.request.request_id])).toEqual([
        ['Acquire', acquired.requestId],
      ]);
    worker.send('write r1 under-the-leaders-token');
    expect((await worker.next('written')).fence).toBe(acquired.token);
    // Later calls go straight to the leader.
    worker.send('describe');
    expect((await worker.next('described')).token).toBe(acquired.token);
    expect(standby.calls).toHaveLength(1);
    worker.send('exit');
    expect((await worker.exited).code).toBe(0);
  });

  it.each([
    ['127.0.0.1:1,,127.0.0.1:2', 'address 2 of "127.0.0.1:1,,127.0.0.1:2" is empty'],
    ['127.0.0.1:1,nowhere', 'address 2 of "127.0.0.1:1,nowhere": expected HOST:PORT'],
    ['127.0.0.1:1,127.0.0.1:1', '"127.0.0.1:1" is listed twice'],
  ])('refuses --coordinator %j with one line naming the entry', async (list, message) => {
    const result = await runFencer(['worker', '--coordinator', list, '--sink', '127.0.0.1:1', '--owner', 'w']);
    expect(result.code).not.toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(message);
  });
});
