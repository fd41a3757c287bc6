import type { CoreLimits } from '../../src/core/quota.js';

/** V4 limits no test of other rules can reach (no resource entry is ever evicted), so those tests do not depend on the defaults. */
export const UNLIMITED: CoreLimits = Object.freeze({
  maxRequestRecords: Number.MAX_SAFE_INTEGER,
  maxRecordsPerOwner: Number.MAX_SAFE_INTEGER,
  maxAcquiresPerSecond: Number.MAX_SAFE_INTEGER,
  maxIdleResources: Number.MAX_SAFE_INTEGER,
});
