// The `fencer` command line as a user meets it: help, bad flags and
// settings, and a server stopping on signals. `fencer cluster` is in
// cluster.test.ts.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFencer, startFencer, stopFencer, tempDir } from '@fencer/testkit';

const dir = tempDir('fencer-cli-');
afterAll(() => dir.remove());

describe('fencer', () => {
  it('lists its subcommands in --help and exits 0', async () => {
    const result = await runFencer(['--help']);
    expect(result.code).toBe(0);
    for (const command of ['sink', 'coordinator', 'cluster', 'inspect', 'release'])
      expect(result.stdout).toContain(command);
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

describe('fencer servers, misconfigured', () => {
  it('an unknown FENCER_LOG_LEVEL is a one-line error, not a stack trace', async () => {
    const result = await runFencer(
      ['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir.path, 'log-level')],
      { env: { FENCER_LOG_LEVEL: 'verbose' } },
    );
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^error: FENCER_LOG_LEVEL must be one of /),
    ]);
  });
});

describe('a server stopping', () => {
  it("finishes cleanly when Ctrl-C (SIGINT) is followed by a supervisor's SIGTERM", async () => {
    const sink = await startFencer([
      'sink',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dir.path, 'two-signals'),
    ]);
    sink.kill('SIGINT');
    sink.kill('SIGTERM');
    expect((await sink.exited).code).toBe(0);
    expect(sink.stderr()).toContain('"msg":"stopped"');
  });
});

describe('fencer health (what compose health checks run)', () => {
  it('exits 0 for a serving server, 1 with one line for an unknown service or no server, non-zero for a bad address', async () => {
    const sink = await startFencer([
      'sink',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dir.path, 'health'),
    ]);
    try {
      expect((await runFencer(['health', sink.address])).code).toBe(0);
      expect((await runFencer(['health', sink.address, '--service', 'fencing.v1.Sink'])).code).toBe(0);
      const unknown = await runFencer(['health', sink.address, '--service', 'fencing.v1.Coordinator']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^fencer health: 127\.0\.0\.1:\d+: /)]);
    } finally {
      await stopFencer(sink);
    }
    const gone = await runFencer(['health', sink.address, '--timeout-ms', '500']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^fencer health: /);
    const bad = await runFencer(['health', 'nowhere']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/^error: /);
  });
});
