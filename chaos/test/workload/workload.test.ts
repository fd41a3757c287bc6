// The workload without faults: real worker processes take turns on two
// resources through their own proxies, every call lands in the history, and
// the checker finds the run safe against the sink's real final state.
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, tempDir } from '@fencer/testkit';
import { DEFAULT_WORKLOAD, latencySpike, loopingWorkerArgs, Scenario } from '../../src/index.js';

const dir = tempDir('fencer-workload-');
afterAll(() => dir.remove());

// Real processes: a loaded machine makes them slower, never wrong.
describe('the chaos workload', { timeout: 120_000 }, () => {
  it('records every call of four looping workers, and a fault-free run checks clean', async () => {
    const s = await Scenario.start({ name: 'workload', data: dir.path, workers: DEFAULT_WORKLOAD.workers });
    try {
      await Promise.all(
        DEFAULT_WORKLOAD.workers.map((owner, i) =>
          s.worker(owner, loopingWorkerArgs(DEFAULT_WORKLOAD.resources[i % 2]!, DEFAULT_WORKLOAD)),
        ),
      );
      // Run until every worker has held a lease and written under it.
      await eventually(
        () => {
          const writers = new Set(
            s.operations.filter((op) => op.method === 'Write' && op.outcome.type === 'ok').map((op) => op.process),
          );
          return writers.size === DEFAULT_WORKLOAD.workers.length ? true : undefined;
        },
        { timeoutMs: 20_000, what: 'every worker to write' },
      );
      const { history, violations } = await s.verdict();
      expect(violations).toEqual([]);
      const { operations, final } = history;
      expect(new Set(operations.map((op) => op.method))).toEqual(
        new Set(['Acquire', 'Release', 'Write', ...(operations.some((op) => op.method === 'Renew') ? ['Renew'] : [])]),
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
    } finally {
      await s.stop();
    }
  });
});

describe('calls a stopped worker never saw end', { timeout: 120_000 }, () => {
  it('are in the history as unknown, so a write that may land after its worker stopped accuses nobody', async () => {
    const s = await Scenario.start({ name: 'in_flight', data: `${dir.path}/in-flight` });
    try {
      const a = await s.worker('worker-a', ['--commands', '--resource', 'job', '--call-timeout-ms', '10000']);
      a.send('acquire');
      await a.next('acquired');
      // The write leaves now and reaches the sink only after the worker is
      // gone: verdict() heals the latency, which lets the held write through.
      await s.inject(latencySpike(a.links.sink, { latencyMs: 60_000, direction: 'upstream' }));
      a.send('write late payload');
      await a.next('sending', { where: (e) => e.method === 'Write' });
      await s.killWorker(a);
      const { history, violations } = await s.verdict();
      const late = history.operations.find((op) => op.method === 'Write');
      expect(late?.outcome).toEqual({ type: 'unknown', code: '', reason: 'NEVER_ANSWERED' });
      expect(violations).toEqual([]);
    } finally {
      await s.stop();
    }
  });
});
