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
  },
});
