// What the soak tests share: a `fencer chaos` run's verdict, asserted with
// everything needed to read a failure without a replay.
import { expect } from 'vitest';

/**
 * Asserts the run exited 0 with the safe verdict; resolves with its seed. On
 * failure the message holds the seed, the summary's tail (it names each
 * violation) and stderr's lines that are not progress (a run that fails says why there).
 */
export function expectSafeRun({ code, stdout, stderr }: { code: number | null; stdout: string; stderr: string }) {
  const seed = /seed (\d+)/.exec(stdout)?.[1];
  const errors = stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('['))
    .slice(-15);
  expect(
    { code, verdict: stdout.split('\n').at(-2) },
    `seed ${seed}\n${stdout.split('\n').slice(-25).join('\n')}\n--- stderr ---\n${errors.join('\n')}`,
  ).toMatchObject({ code: 0, verdict: 'verdict: S1–S6 and the lock model held' });
  return seed;
}
