// `fencer sink` on the command line: help, one-line errors with a non-zero
// exit for bad flags, A1's refusal to start without authentication, flags
// settable by environment, metrics.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  runFencer,
  scrapeMetrics,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
  sinkCalls,
} from '@fencer/testkit';

const dirs: ReturnType<typeof tempDir>[] = [];
const processes: FencerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await stopFencer(p);
  for (const d of dirs.splice(0)) d.remove();
});
function newDir() {
  const dir = tempDir('fencer-sink-cli-');
  dirs.push(dir);
  return dir.path;
}

/**
 * A refusal: non-zero exit, nothing on stdout (no ready line), and exactly
 * one plain-text line on stderr besides any JSON log lines.
 */
function expectOneLineRefusal(result: { code: number | null; stdout: string; stderr: string }): string {
  expect(result.code).not.toBe(0);
  expect(result.code).not.toBeNull();
  expect(result.stdout).toBe('');
  const lines = result.stderr
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('{'));
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('fencer sink command line', () => {
  it('--help exits 0 and lists the flags', async () => {
    const result = await runFencer(['sink', '--help']);
    expect(result.code).toBe(0);
    for (const flag of ['--listen', '--data', '--credentials', '--insecure', '--max-payload-bytes', '--metrics'])
      expect(result.stdout).toContain(flag);
  });

  it('an unknown flag is a one-line error', async () => {
    expectOneLineRefusal(await runFencer(['sink', '--insecure', '--no-such-flag']));
  });

  it('A1: neither --credentials nor --insecure refuses to start, naming both', async () => {
    const line = expectOneLineRefusal(await runFencer(['sink', '--listen', '127.0.0.1:0', '--data', newDir()]));
    expect(line).toContain('--credentials');
    expect(line).toContain('--insecure');
  });

  it('--credentials together with --insecure is refused', async () => {
    const dir = newDir();
    const file = join(dir, 'credentials.json');
    writeFileSync(file, JSON.stringify([{ token: 'coordinator-token-0001', identity: 'c', role: 'coordinator' }]));
    expectOneLineRefusal(
      await runFencer(['sink', '--credentials', file, '--insecure', '--listen', '127.0.0.1:0', '--data', dir]),
    );
  });

  it('A1: a credentials file without a coordinator credential is refused', async () => {
    const dir = newDir();
    const file = join(dir, 'credentials.json');
    writeFileSync(file, JSON.stringify([{ token: 'worker-token-000000001', identity: 'w', role: 'worker' }]));
    const line = expectOneLineRefusal(
      await runFencer(['sink', '--credentials', file, '--listen', '127.0.0.1:0', '--data', dir]),
    );
    expect(line).toContain('coordinator');
  });

  it.each([
    ['--listen', 'nope'],
    ['--max-payload-bytes', '0'],
  ])('a bad value %s %s is a one-line error', async (flag, value) => {
    expectOneLineRefusal(
      await runFencer(['sink', '--insecure', '--data', newDir(), '--listen', '127.0.0.1:0', flag, value]),
    );
  });

  it('an address already in use is a one-line start-up error', async () => {
    const first = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', newDir()]);
    processes.push(first);
    const line = expectOneLineRefusal(
      await runFencer(['sink', '--insecure', '--listen', first.address, '--data', newDir()]),
    );
    expect(line).toMatch(/^fencer sink: /);
  });

  it('A1: FENCER_SINK_INSECURE=false does not switch authentication off', async () => {
    const result = await runFencer(['sink', '--listen', '127.0.0.1:0', '--data', newDir()], {
      env: { FENCER_SINK_INSECURE: 'false' },
    });
    expect(expectOneLineRefusal(result)).toContain('--insecure');
  });

  it('every flag can come from the environment', async () => {
    const dataDir = join(newDir(), 'from-env');
    const sink = await startFencer(['sink'], {
      env: {
        FENCER_SINK_INSECURE: '1',
        FENCER_SINK_LISTEN: '127.0.0.1:0',
        FENCER_SINK_DATA: dataDir,
        FENCER_SINK_MAX_PAYLOAD_BYTES: '10',
      },
    });
    processes.push(sink);
    const client = sinkCalls(sink.address);
    try {
      await client.advance({ resource: 'r', token: '1', grant_id: 'g1' });
      expect(
        (await client.write({ resource: 'r', token: '1', result_id: 'ok', payload: Buffer.alloc(10) })).outcome,
      ).toBe('APPLIED');
      await expect(
        client.write({ resource: 'r', token: '1', result_id: 'big', payload: Buffer.alloc(11) }),
      ).rejects.toMatchObject({ code: 3 });
    } finally {
      client.close();
    }
  });

  it('--metrics serves Prometheus metrics, including group-commit batches', async () => {
    const sink = await startFencer([
      'sink',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      newDir(),
      '--metrics',
      '127.0.0.1:0',
    ]);
    processes.push(sink);
    const client = sinkCalls(sink.address);
    try {
      await client.advance({ resource: 'r', token: '1', grant_id: 'g1' });
    } finally {
      client.close();
    }
    const text = await scrapeMetrics(sink);
    expect(text).toMatch(/^fencer_sink_commit_batches_total [1-9]/m);
    expect(text).toMatch(/^fencer_rpc_calls_total\{service="sink",method="AdvanceFence",code="OK"\} 1/m);
  });
});
