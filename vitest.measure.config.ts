import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// Measurements that take far longer than a test (`npm run chaos:catch-rate`):
// `npm test`'s resolution and timeouts, but only `*.measure.ts` files, one
// at a time. Spread, not mergeConfig: merging would append to `include`.
export default defineConfig({
  ...base,
  test: { ...base.test, include: ['**/test/**/*.measure.ts'], maxWorkers: 1 },
});
