// The workload without faults: real worker processes take turns on two
// resources through the proxies, every call lands in the history, and the
// checker finds the run safe against the sink's real final state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '@fencer/supervisor';
import { eventually, tempDir } from '@fencer/testkit';
import { checkHistory, DEFAULT_WORKLOAD, readFinalState, Workload } from '../../src/index.js';

let dir: ReturnType<typeof tempDir>;
let cluster: Cluster;
beforeAll(async () => {
  dir = tempDir('fencer-workload-');
  cluster = await startCluster({
    data: dir.path,
    sinkListen: '127.0.0.1:0',
    coordinatorListen: '127.0.0.1:0',
    insecure: false,
    stopGraceMs: 5_000,
    workers: DEFAULT_WORKLOAD.workers,
  });
});
afterAll(async () => {
  await cluster?.stop();
  dir?.remove();
});

describe('the chaos workload', () => {
  it('records every call of four looping workers, and a fault-free run checks clean', async () => {
    const workload = await Workload.start(cluster, DEFAULT_WORKLOAD);
    // Run until every worker has held a lease and written under it.
    await eventually(
      () => {
        const writers = new Set(
          workload.operations.filter((op) => op.method === 'Write' && op.outcome.type === 'ok').map((op) => op.process),
        );
        return writers.size === DEFAULT_WORKLOAD.workers.length ? true : undefined;
      },
      { timeoutMs: 20_000, what: 'every worker to write' },
    );
    await workload.stop();
    const operations = [...workload.operations];
    const final = await readFinalState(cluster, operations);
    expect(checkHistory({ operations, final, faults: [] })).toEqual([]);

    const methods = new Set(operations.map((op) => op.method));
    expect([...methods].sort()).toEqual(
      ['Acquire', 'Release', 'Write'].concat(methods.has('Renew') ? ['Renew'] : []).sort(),
    );
    expect(Object.keys(final.fences).sort()).toEqual(DEFAULT_WORKLOAD.resources);
    // Every acknowledged write is in the final state the checker was given.
    const acked = operations.filter((op) => op.method === 'Write' && op.outcome.type === 'ok');
    expect(acked.length).toBeGreaterThanOrEqual(4);
    for (const op of acked) {
      expect(final.results[String(op.request.resource)]?.[String(op.request.result_id)]?.payload).toBe(
        op.request.payload,
      );
    }
  });
});
