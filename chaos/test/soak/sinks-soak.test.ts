// `fencer chaos --sinks 2`: a short seeded soak on two sinks sharded by
// resource, each sink and its links a target of the faults on its own,
// checked S1–S6, the lock model and P4 on each sink's final state.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectSafeRun } from './helpers.js';
import { runFencer, tempDir } from '@fencer/testkit';

const SECONDS = Number(process.env.FENCER_SINKS_SOAK_SECONDS ?? 20);
const dir = tempDir('fencer-sinks-soak-');
afterAll(() => dir.remove());

describe('fencer chaos --sinks', () => {
  it(
    `a ${SECONDS} s soak on two sinks holds S1–S6, the lock model and P4, with grants on both`,
    async () => {
      const history = join(dir.path, 'history.jsonl');
      const run = await runFencer(
        ['chaos', '--sinks', '2', '--resources', '4', '--seconds', String(SECONDS), '--history', history],
        { timeoutMs: (SECONDS + 90) * 1_000 },
      );
      const seed = expectSafeRun(run);
      expect(run.stdout).toContain('2 sinks sharded by resource');
      const events = readFileSync(history, 'utf8')
        .trim()
        .split('\n')
        .map(
          (line) =>
            JSON.parse(line) as {
              type: string;
              process?: string;
              f?: string;
              value?: { fault?: string; target?: string; response?: { lease?: { sink?: { name: string } } } };
            },
        );
      // Both sinks owned resources the workers were granted (P3: each grant names its sink).
      const sinks = new Set(
        events
          .filter((event) => event.type === 'ok' && event.f === 'acquire')
          .map((event) => event.value!.response!.lease!.sink!.name),
      );
      expect(sinks, `seed ${seed}`).toEqual(new Set(['sink-1', 'sink-2']));
      // The faults are in the exported history too, as the nemesis process's start and stop events.
      const faults = events.filter((event) => event.process === 'nemesis');
      expect(faults.filter((event) => event.f === 'start').length, `seed ${seed}`).toBeGreaterThan(0);
      for (const event of faults)
        expect(event.value).toEqual({ fault: expect.any(String), target: expect.any(String) });
    },
    (SECONDS + 120) * 1_000,
  );
});
