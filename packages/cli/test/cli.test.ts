// The `fencer` command line as a user meets it: help, bad flags, and
// `fencer cluster` starting and stopping two real processes.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFencer, startFencer, stopFencer, tempDir } from '@fencer/testkit';

const dir = tempDir('fencer-cli-');
afterAll(() => dir.remove());

describe('fencer', () => {
  it('lists its subcommands in --help and exits 0', async () => {
    const result = await runFencer(['--help']);
    expect(result.code).toBe(0);
    for (const command of ['sink', 'coordinator', 'cluster']) expect(result.stdout).toContain(command);
  });

  it.each([[['--bogus']], [['no-such-command']], [['cluster', '--sink-listen', 'nowhere']]])(
    'rejects %j with a one-line error and a non-zero exit',
    async (args) => {
      const result = await runFencer(args);
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim().split('\n')[0]).toMatch(/^error: /);
    },
  );
});

describe('fencer cluster', () => {
  it('runs sink and coordinator as separate processes and stops both on SIGTERM', async () => {
    const data = join(dir.path, 'cluster');
    const cluster = await startFencer(['cluster', '--data', data, '--sink-listen', '127.0.0.1:0', '--coordinator-listen', '127.0.0.1:0']);
    expect(cluster.ready).toMatchObject({ service: 'cluster' });
    expect(cluster.ready.sink).not.toBe(cluster.ready.coordinator);
    await stopFencer(cluster);
    expect((await cluster.exited).code).toBe(0);
    // Both children are gone: their LevelDB locks are free again.
    for (const service of ['sink', 'coordinator']) {
      const again = await startFencer([service, '--insecure', '--listen', '127.0.0.1:0', '--data', join(data, service)]);
      await stopFencer(again);
    }
  });

  it('fails with a clear message and stops what it started when a port is taken', async () => {
    const blocker = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir.path, 'blocker')]);
    const result = await runFencer(['cluster', '--data', join(dir.path, 'busy'), '--sink-listen', '127.0.0.1:0', '--coordinator-listen', blocker.address]);
    await stopFencer(blocker);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the coordinator did not start');
  });
});
