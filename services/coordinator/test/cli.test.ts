// `fencer coordinator` as an operator meets it: help, one-line errors and a
// non-zero exit for bad flags and unusable files, a clear refusal for a
// second coordinator on one data dir, a clean SIGTERM.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runFencer, startFencer, stopFencer, tempDir } from '@fencer/testkit';

const dir = tempDir();
afterAll(() => dir.remove());

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('fencer coordinator (CLI)', () => {
  it("refuses a sink's data directory instead of loading it as empty state, and the sink refuses a coordinator's", async () => {
    const sinkData = join(dir.path, 'sink-data');
    await stopFencer(await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', sinkData]));
    const coordinator = await runFencer(['coordinator', '--insecure', '--listen', '127.0.0.1:0', '--data', sinkData]);
    expect(coordinator.code).toBe(1);
    expect(oneLine(coordinator.stderr)).toBe(
      `fencer coordinator: data directory ${sinkData} holds the sink's data, not the coordinator's`,
    );

    const coordinatorData = join(dir.path, 'coordinator-data');
    await stopFencer(
      await startFencer(['coordinator', '--insecure', '--listen', '127.0.0.1:0', '--data', coordinatorData]),
    );
    const sink = await runFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', coordinatorData]);
    expect(sink.code).toBe(1);
    expect(oneLine(sink.stderr)).toBe(
      `fencer sink: data directory ${coordinatorData} holds the coordinator's data, not the sink's`,
    );
  });

  it('--help exits 0 and lists the options', async () => {
    const result = await runFencer(['coordinator', '--help']);
    expect(result.code).toBe(0);
    for (const flag of [
      '--listen',
      '--data',
      '--sink',
      '--sink-token-file',
      '--credentials',
      '--insecure',
      '--fence-on-expiry',
      '--request-retention-ms',
      '--sink-deadline-ms',
      '--metrics',
      '--store',
      '--etcd',
      '--etcd-prefix',
      '--leader-ttl-ms',
      '--advertise',
    ]) {
      expect(result.stdout).toContain(flag);
    }
  });

  it.each([
    ['an unknown flag', ['--insecure', '--frobnicate']],
    ['a bad HOST:PORT', ['--insecure', '--listen', 'localhost']],
    ['a bad number', ['--insecure', '--request-retention-ms', '-5']],
    ['a zero deadline', ['--insecure', '--sink-deadline-ms', '0']],
    ['neither --credentials nor --insecure', []],
    ['both --credentials and --insecure', ['--insecure', '--credentials', '/dev/null']],
    ['an unreadable sink token file', ['--insecure', '--sink-token-file', '/nonexistent/token']],
    ['an unknown store', ['--insecure', '--store', 'rocksdb']],
    ['--store etcd without --etcd (H1)', ['--insecure', '--store', 'etcd']],
  ])('%s → non-zero exit with a one-line message', async (_name, args) => {
    const result = await runFencer(['coordinator', '--data', join(dir.path, 'never'), ...args]);
    expect(result.code).not.toBe(0);
    expect(oneLine(result.stderr)).toMatch(/^error: /);
  });

  it('an empty sink token file → non-zero exit with a one-line message', async () => {
    const path = join(dir.path, 'empty-token');
    writeFileSync(path, '   \n');
    const result = await runFencer([
      'coordinator',
      '--insecure',
      '--sink-token-file',
      path,
      '--data',
      join(dir.path, 'never'),
    ]);
    expect(result.code).not.toBe(0);
    oneLine(result.stderr);
  });

  it('a second coordinator on the same data dir exits 1 with one line, not a stack; the first stops cleanly on SIGTERM', async () => {
    const data = join(dir.path, 'shared');
    const env = {
      FENCER_COORDINATOR_INSECURE: '1',
      FENCER_COORDINATOR_LISTEN: '127.0.0.1:0',
      FENCER_COORDINATOR_DATA: data,
    };
    const first = await startFencer(['coordinator'], { env }); // configured through the environment alone
    try {
      const second = await runFencer(['coordinator'], { env: { ...env, FENCER_LOG_LEVEL: 'warn' } });
      expect(second.code).toBe(1);
      expect(oneLine(second.stderr)).toMatch(/^fencer coordinator: data directory .* is in use/);
    } finally {
      first.kill('SIGTERM');
      expect(await first.exited).toEqual({ code: 0, signal: null });
    }
  });
});
