// fencer cluster --replicas: coordinator replicas on etcd (H), and the
// refusals that come before anything starts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFencer, tempDir } from '@fencer/testkit';

const dir = tempDir('fencer-cluster-replicas-');
afterAll(() => dir.remove());

describe('fencer cluster --replicas, refused before anything starts', () => {
  it('without an etcd on PATH nor --etcd: one line, exit 1, nothing started', async () => {
    const data = join(dir.path, 'no-etcd');
    const emptyPath = join(dir.path, 'empty-bin');
    const result = await runFencer(['cluster', '--replicas', '2', '--data', data], { env: { PATH: emptyPath } });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      "fencer cluster: no etcd on PATH to start the replicas' etcd from: install etcd (Debian: etcd-server), or name a running one (--etcd HOST:PORT,...)",
    ]);
    expect(existsSync(data)).toBe(false);
  });

  it.each([
    [['--etcd', '127.0.0.1:2379'], "error: --etcd is the replicas' etcd: give --replicas N too"],
    [['--replicas', '0'], "error: option '--replicas <n>' argument '0' is invalid."],
    [['--replicas', '2', '--etcd', '127.0.0.1:2379,'], "error: option '--etcd <host:port,...>' argument"],
  ])('%j is a one-line error', async (flags, message) => {
    const data = join(dir.path, 'bad-flags');
    const result = await runFencer(['cluster', '--data', data, ...flags]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(message);
    expect(existsSync(data)).toBe(false);
  });
});
