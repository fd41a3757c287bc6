// The `fencer` command line as a user meets it: help, bad flags, and
// `fencer cluster` starting and stopping two real processes.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
    expect(result.stderr).toContain('the coordinator did not start: fencer coordinator: cannot listen on');
  });
});

describe('fencer cluster, as a user meets it', () => {
  it('A1: FENCER_CLUSTER_INSECURE=false keeps authentication on', async () => {
    const data = join(dir.path, 'env-false');
    const cluster = await startFencer(['cluster', '--data', data, '--sink-listen', '127.0.0.1:0', '--coordinator-listen', '127.0.0.1:0'], {
      env: { FENCER_CLUSTER_INSECURE: 'false' },
    });
    await stopFencer(cluster);
    expect(existsSync(join(data, 'credentials.json'))).toBe(true);
  });

  it('a data path that is a file is a one-line error, not a stack trace', async () => {
    const file = join(dir.path, 'a-file');
    writeFileSync(file, 'x');
    const result = await runFencer(['cluster', '--data', file, '--sink-listen', '127.0.0.1:0', '--coordinator-listen', '127.0.0.1:0']);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^error: cannot use /);
  });

  it('a child that cannot start is explained with its own reason', async () => {
    const blocker = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir.path, 'blocker2')]);
    const result = await runFencer(['cluster', '--data', join(dir.path, 'busy2'), '--sink-listen', blocker.address, '--coordinator-listen', '127.0.0.1:0']);
    await stopFencer(blocker);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`fencer sink: cannot listen on ${blocker.address}`);
  });

  it('regenerates a missing coordinator token from the credentials file', async () => {
    const data = join(dir.path, 'token-gone');
    await stopFencer(await startFencer(['cluster', '--data', data, '--sink-listen', '127.0.0.1:0', '--coordinator-listen', '127.0.0.1:0']));
    const token = readFileSync(join(data, 'coordinator.token'), 'utf8');
    rmSync(join(data, 'coordinator.token'));
    await stopFencer(await startFencer(['cluster', '--data', data, '--sink-listen', '127.0.0.1:0', '--coordinator-listen', '127.0.0.1:0']));
    expect(readFileSync(join(data, 'coordinator.token'), 'utf8')).toBe(token);
  });
});

describe('a server stopping', () => {
  it('finishes cleanly when Ctrl-C (SIGINT) is followed by a supervisor\'s SIGTERM', async () => {
    const sink = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir.path, 'two-signals')]);
    sink.kill('SIGINT');
    sink.kill('SIGTERM');
    expect((await sink.exited).code).toBe(0);
    expect(sink.stderr()).toContain('"msg":"stopped"');
  });
});
