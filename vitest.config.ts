import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Files that each take minutes (the soaks, their negative controls, the
 * bench's runs of every case), in the order they start. A clean clone has no
 * timings cached for Vitest to start the longest first, and it then goes by
 * file size: a two-minute soak in a short file started last and kept one
 * worker busy for two minutes after the other had finished.
 */
const LONGEST_FIRST = [
  'packages/bench/test/bench.process.test.ts',
  'chaos/test/soak/soak.test.ts',
  'chaos/test/variants/two-step-soak.test.ts',
  'chaos/test/variants/unguarded-writes.test.ts',
  'chaos/test/variants/conformance-variants.test.ts',
  'chaos/test/soak/replicas-soak.test.ts',
];
// A renamed file would silently lose its place.
for (const file of LONGEST_FIRST) {
  if (!existsSync(join(import.meta.dirname, file)))
    throw new Error(`vitest.config.ts: LONGEST_FIRST names ${file}, which does not exist`);
}

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = LONGEST_FIRST.indexOf(relative(import.meta.dirname, file.moduleId));
      return at === -1 ? LONGEST_FIRST.length : at;
    };
    // Stable: the rest keep the order Vitest chose.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

// Tests import workspace packages from their TypeScript sources (the
// "fencer-source" export condition), so a test run never needs a stale dist.
export default defineConfig({
  resolve: { conditions: ['fencer-source'] },
  ssr: { resolve: { conditions: ['fencer-source'] } },
  test: {
    include: ['**/src/**/*.test.ts', '**/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Vitest's default (cores - 1) is one worker on a 2-core machine. Most
    // test files spend much of their time waiting on child processes and
    // sockets, so half again as many workers as cores keeps the cores busy:
    // on this 2-core machine 3 workers ran the suite in 809 s against 935 s
    // with 2 (CPU 94 % busy), every test waiting on events with a bound.
    maxWorkers: Math.max(2, Math.round(availableParallelism() * 1.5)),
    sequence: { sequencer: LongestFirst },
  },
});
