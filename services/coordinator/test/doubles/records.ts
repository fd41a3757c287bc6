// The grant and request record the store tests write, with any field changed.
import type { Grant, RequestRecord } from '../../src/core/model.js';

/** alice's grant of resource r, token 1, 1 s TTL, not ended; `over` changes any field. */
export const sampleGrant = (over: Partial<Grant> = {}): Grant => ({
  resource: 'r',
  ownerId: 'alice',
  incarnation: 1n,
  token: 1n,
  ttlMs: 1_000,
  ended: null,
  ...over,
});

/** The request record q1 of sampleGrant(); `over` changes any field. */
export const sampleRecord = (over: Partial<RequestRecord> = {}): RequestRecord => ({
  requestId: 'q1',
  resource: 'r',
  ownerId: 'alice',
  incarnation: 1n,
  ttlMs: 1_000,
  token: 1n,
  ...over,
});
