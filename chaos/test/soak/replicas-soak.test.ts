// `fencer chaos --replicas 2`: a short seeded soak on coordinator replicas
// on etcd, under the replica faults beside the others, checked S1–S6 and
// against the lock model; and the one flag error of its own.
import { describe, expect, it } from 'vitest';
import { expectSafeRun } from './helpers.js';
import { runFencer } from '@fencer/testkit';
import { REPLICA_SOAK_KINDS } from '../../src/index.js';

const SECONDS = Number(process.env.FENCER_REPLICA_SOAK_SECONDS ?? 40);

describe('fencer chaos --replicas', () => {
  it(
    `a ${SECONDS} s soak on two replicas under every replica fault holds S1–S6 and the lock model`,
    async () => {
      const run = await runFencer(['chaos', '--replicas', '2', '--seconds', String(SECONDS)], {
        timeoutMs: (SECONDS + 120) * 1_000,
      });
      const seed = expectSafeRun(run);
      expect(run.stdout).toContain('2 coordinator replicas on etcd');
      // The schedule deals every kind once before any comes again: each replica fault struck.
      const faults = /faults \(([^)]*)\)/.exec(run.stdout)![1]!;
      for (const kind of REPLICA_SOAK_KINDS) expect(faults, `seed ${seed}`).toMatch(new RegExp(`(^|, )${kind} \\d+`));
      for (const kind of ['crash-wipe', 'split-brain', 'clock-skew']) expect(faults).not.toContain(kind);
    },
    (SECONDS + 150) * 1_000,
  );

  it('rejects one replica with one line and exit 1', async () => {
    const { code, stderr } = await runFencer(['chaos', '--replicas', '1']);
    expect([code, stderr.trim()]).toEqual([1, 'error: --replicas must be at least 2']);
  });
});
