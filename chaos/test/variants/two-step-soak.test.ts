// The F2 negative control of issue 18, at the CI soak's length: the seeded
// soak (every soak nemesis, the generator's `contended` mix) against a sink
// that checks the fence and stores a write in two steps. The mix twins some
// writes (two payloads under one result id, sent at once), which such a sink
// lets both through; the checker must find that from the history and the
// sink's final state alone. One seed here; `npm run chaos:catch-rate`
// measures the rate over many.
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '@fencer/testkit';
import { variantBin } from '@fencer/variants';
import { runSoak } from '../../src/index.js';

const SECONDS = Number(process.env.FENCER_SOAK_SECONDS ?? 120);
const dir = tempDir('fencer-two-step-soak-');
afterAll(() => dir.remove());

describe('the soak against a sink that checks and stores in two steps', () => {
  it(
    `two-step-sink is caught within a ${SECONDS} s soak of the contended mix (S5, S6)`,
    async () => {
      const { violations, history } = await runSoak({
        seconds: SECONDS,
        seed: 1,
        data: dir.path,
        workers: 4,
        resources: 2,
        mix: 'contended',
        binaries: { sink: variantBin('two-step-sink') },
      });
      const rules = new Set(violations.map((violation) => violation.rule));
      expect(
        [...rules].filter((rule) => rule === 'S5' || rule === 'S6'),
        `${history.operations.length} operations`,
      ).not.toEqual([]);
      for (const violation of violations) expect(violation.operations?.length).toBeGreaterThan(0);
    },
    (SECONDS + 120) * 1_000,
  );
});
