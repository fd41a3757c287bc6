// `fencer conformance` against this project's replicated deployment: two
// coordinator replicas on a 3-member etcd (H) over two sinks sharded by
// resource (P), each reached through its cluster proxy as workers reach it.
// Given every coordinator and every sink, and restart commands that SIGKILL
// them all, the kit checks every rule it has, H2 and H7 among them, and the
// replicated deployment holds each one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFencer, serveRestartCommands, startTestCluster, type RestartCommands } from '@fencer/testkit';
import type { Cluster } from '@fencer/supervisor';
import { RULES } from '../src/index.js';

let cluster: Cluster;
let stopCluster: () => Promise<void>;
let restarts: RestartCommands;

beforeAll(async () => {
  ({ cluster, stop: stopCluster } = await startTestCluster('fencer-conformance-replicas-', {
    replicas: { count: 2 },
    sinks: 2,
  }));
  restarts = await serveRestartCommands({
    sink: async () => {
      await Promise.all(cluster.sinks.map((sink) => cluster.kill(sink.name)));
      await Promise.all(cluster.sinks.map((sink) => cluster.restart(sink.name)));
    },
    coordinator: async () => {
      await Promise.all(cluster.replicas.map((replica) => cluster.kill(replica.name)));
      await Promise.all(cluster.replicas.map((replica) => cluster.restart(replica.name)));
    },
  });
}, 120_000);

afterAll(async () => {
  await restarts?.close();
  await stopCluster?.();
});

describe('fencer conformance against coordinator replicas on etcd and sharded sinks', () => {
  it('holds every rule the kit has, H2 and H7 with both replicas, F6 and L7 across SIGKILLs of all', async () => {
    const run = await runFencer(
      [
        'conformance',
        '--coordinator',
        cluster.replicas.map((replica) => replica.links.workersToCoordinator).join(','),
        '--sink',
        cluster.sinks.map((sink) => sink.links.workersToSink).join(','),
        '--credentials',
        cluster.credentials!.credentialsFile,
        '--sink-restart-cmd',
        restarts.command('sink'),
        '--coordinator-restart-cmd',
        restarts.command('coordinator'),
        '--json',
      ],
      { timeoutMs: 240_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as { rule: string; status: string; detail: string }[];
    expect(rows.map((row) => row.rule)).toEqual(RULES);
    for (const row of rows) expect(row, row.rule).toMatchObject({ status: 'held' });
  }, 300_000);
});
