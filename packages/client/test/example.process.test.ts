// The README's worked example is real: the same file, compiled against the
// built package, run against a real secured cluster.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster } from '@fencer/supervisor';
import { startTestCluster } from '@fencer/testkit';
import { CoordinatorConnection, LeaseKeeper, SinkConnection } from '../src/index.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const run = promisify(execFile);

let cluster: Cluster;
let stopCluster: () => Promise<void>;
beforeAll(async () => {
  ({ cluster, stop: stopCluster } = await startTestCluster('fencer-client-example-'));
});
afterAll(async () => {
  await stopCluster?.();
});

const example = (owner: 'worker-a' | 'worker-b') =>
  run(process.execPath, [
    here('../examples/dist/worker.js'),
    cluster.links.workersToCoordinator,
    cluster.links.workersToSink,
    cluster.credentials!.workerTokenFiles[owner]!,
    owner,
  ]);

describe('the README example worker', () => {
  it('is shown in the README exactly as the file that is compiled and run', () => {
    const readme = readFileSync(here('../README.md'), 'utf8');
    const shown = /## A worked example[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(shown).toBe(readFileSync(here('../examples/worker.ts'), 'utf8'));
  });

  it('writes its three parts under one token and releases the lease; a second run gets the next token', async () => {
    expect((await example('worker-a')).stdout.trim().split('\n')).toEqual([
      'part 1: applied under token 1',
      'part 2: applied under token 1',
      'part 3: applied under token 1',
    ]);
    // `await using` released it, so worker-b gets the next token at once; its
    // parts carry the same payloads, which the sink answers REPLAYED (F3).
    expect((await example('worker-b')).stdout.trim().split('\n')[0]).toBe('part 1: replayed under token 2');
  });

  it('says who holds the report when it is taken, and exits 0', async () => {
    const token = readFileSync(cluster.credentials!.workerTokenFiles['worker-b']!, 'utf8').trim();
    const coordinator = new CoordinatorConnection({ address: cluster.coordinator.ready.address, token });
    try {
      await using _held = await LeaseKeeper.acquire(coordinator, {
        resource: 'report-2026-12',
        ownerId: 'worker-b',
        ttlMs: 10_000,
      });
      const { stdout } = await example('worker-a');
      expect(stdout).toMatch(/^worker-b holds the report for \d+ ms more\n$/);
    } finally {
      coordinator.close();
    }
    const sink = new SinkConnection({ address: cluster.sink.ready.address, token });
    expect((await sink.read('report-2026-12', 'part-3')).payload.toString()).toBe('part 3 of the December report');
    sink.close();
  });
});
