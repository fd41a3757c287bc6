import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

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
    // Vitest's default (cores - 1) is one worker on a 2-core machine; most
    // test files spend their time waiting on child processes and sockets, so
    // a second worker nearly halves the run there without starving either.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
