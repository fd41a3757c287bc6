// Issue 18's measurement: how many seeds of the soak catch a sink that
// accepts every stale write, per workload mix. A measurement, not part of
// `npm test` (each seed takes a soak's length: 10 seeds of 120 s, two
// mixes, are 40 minutes), so it has its own runner and file name; it prints
// a line per seed and the rate per mix, and fails if a generator mix lets a
// seed through (the loop is measured only, as the baseline the generator
// replaced):
//   FENCER_CATCH_RATE_SEEDS=1-10 FENCER_SOAK_SECONDS=120 FENCER_CATCH_RATE_MIXES=default,loop \
//     npm run chaos:catch-rate
import { describe, expect, it } from 'vitest';
import { tempDir } from '@fencer/testkit';
import { variantBin } from '@fencer/variants';
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

describe('the soak against stale-accepting-sink', () => {
  it.each(MIXES)(
    'mix %s: caught on every seed',
    async (mix) => {
      expect(WORKLOAD_MIXES).toContain(mix);
      const caught: number[] = [];
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
            binaries: { sink: variantBin('stale-accepting-sink') },
          });
          const rules = [...new Set(violations.map((violation) => violation.rule))];
          console.log(`mix ${mix}, seed ${seed}: ${rules.length > 0 ? `caught (${rules.join(', ')})` : 'missed'}`);
          if (rules.length > 0) caught.push(seed);
        } finally {
          dir.remove();
        }
      }
      console.log(`mix ${mix}: caught on ${caught.length} of ${SEEDS.length} seeds, ${SECONDS} s each`);
      if (mix !== 'loop') expect(caught).toEqual(SEEDS);
    },
    SEEDS.length * (SECONDS + 90) * 1_000,
  );
});
