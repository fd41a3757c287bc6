// Issue 18's measurement: how many seeds of the soak catch each sink variant
// the soak must catch, per workload mix: one that accepts every stale write,
// and one whose Write checks the fence and stores in two steps. A
// measurement, not part of `npm test` (each seed takes a soak's length: 10
// seeds of 120 s, two mixes, are 40 minutes per variant), so it has its own
// runner and file name; it prints a line per seed and the rate per variant
// and mix, and fails if a generator mix lets a seed through (the loop is
// measured only, as the baseline the generator replaced):
//   FENCER_CATCH_RATE_SEEDS=1-10 FENCER_SOAK_SECONDS=120 FENCER_CATCH_RATE_MIXES=default,loop \
//     FENCER_CATCH_RATE_VARIANTS=stale-accepting-sink,two-step-sink npm run chaos:catch-rate
import { describe, expect, it } from 'vitest';
import { tempDir } from '@fencer/testkit';
import { variantBin, VARIANTS, type VariantName } from '@fencer/variants';
import { runSoak, WORKLOAD_MIXES, type WorkloadMix } from '../../src/index.js';

/** `1-10` or `1,4,7` as seeds. */
function seedsOf(spec: string): number[] {
  const range = /^(\d+)-(\d+)$/.exec(spec);
  if (range) return Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i);
  return spec === '' ? [] : spec.split(',').map(Number);
}

const SEEDS = seedsOf(process.env.FENCER_CATCH_RATE_SEEDS ?? '1-10');
const SECONDS = Number(process.env.FENCER_SOAK_SECONDS ?? 120);
const MIXES = (process.env.FENCER_CATCH_RATE_MIXES ?? 'default,loop').split(',') as WorkloadMix[];
const SINKS = (process.env.FENCER_CATCH_RATE_VARIANTS ?? 'stale-accepting-sink,two-step-sink').split(
  ',',
) as VariantName[];
const RUNS = SINKS.flatMap((variant) => MIXES.map((mix) => ({ variant, mix })));

describe('the soak against broken sinks', () => {
  it.each(RUNS)(
    '$variant, mix $mix: caught on every seed',
    async ({ variant, mix }) => {
      expect(WORKLOAD_MIXES).toContain(mix);
      expect(VARIANTS[variant]?.service).toBe('sink');
      const caught: number[] = [];
      // A seed whose run could not go on (a process that did not start on a
      // loaded machine) is reported and left out of the rate, not counted either way.
      const broken: number[] = [];
      for (const seed of SEEDS) {
        const dir = tempDir('fencer-catch-rate-');
        try {
          const { violations } = await runSoak({
            seconds: SECONDS,
            seed,
            data: dir.path,
            workers: 4,
            resources: 2,
            mix,
            binaries: { sink: variantBin(variant) },
          });
          const rules = [...new Set(violations.map((violation) => violation.rule))];
          console.log(
            `${variant}, mix ${mix}, seed ${seed}: ${rules.length > 0 ? `caught (${rules.join(', ')})` : 'missed'}`,
          );
          if (rules.length > 0) caught.push(seed);
        } catch (error) {
          console.log(`${variant}, mix ${mix}, seed ${seed}: did not run: ${(error as Error).message}`);
          broken.push(seed);
        } finally {
          dir.remove();
        }
      }
      const ran = SEEDS.filter((seed) => !broken.includes(seed));
      console.log(
        `${variant}, mix ${mix}: caught on ${caught.length} of ${ran.length} seeds, ${SECONDS} s each${broken.length > 0 ? ` (${broken.length} did not run)` : ''}`,
      );
      expect(ran.length).toBeGreaterThan(0);
      if (mix !== 'loop') expect(caught).toEqual(ran);
    },
    SEEDS.length * (SECONDS + 90) * 1_000,
  );
});
