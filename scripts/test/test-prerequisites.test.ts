// `npm test`'s first step on a machine that lacks what the tests need: it
// names the missing Debian packages and the exact apt-get line, and stops
// (FENCER_TEST_NO_INSTALL keeps it from installing them, as it would as root).
// With only a shell and Debian's python3 on PATH, everything found through
// PATH is missing.
import { spawnSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '@fencer/testkit';

const SCRIPT = fileURLToPath(new URL('../test-prerequisites.sh', import.meta.url));
const bin = tempDir('fencer-prerequisites-');
afterAll(() => bin.remove());

function check(path: string) {
  const run = spawnSync('/bin/bash', [SCRIPT], {
    env: { PATH: path, FENCER_TEST_NO_INSTALL: '1' },
    encoding: 'utf8',
  });
  return { code: run.status, stderr: run.stderr };
}

describe('test prerequisites', () => {
  it('stops at once with the apt-get line naming exactly what is missing', () => {
    symlinkSync('/bin/sh', join(bin.path, 'sh'));
    const missing = 'protobuf-compiler protobuf-compiler-grpc docker-compose chromium etcd-server faketime';
    expect(check(bin.path)).toEqual({
      code: 1,
      stderr: [
        `npm test needs Debian packages that are not installed here: ${missing}`,
        'install them, then run npm test again:',
        `  sudo apt-get install -y ${missing}`,
        '',
      ].join('\n'),
    });
  });

  it('passes silently where everything is installed (as .ci/run leaves it)', () => {
    expect(check(process.env.PATH!)).toEqual({ code: 0, stderr: '' });
  });
});
