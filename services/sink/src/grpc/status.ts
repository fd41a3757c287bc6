// The sink's one outcome → response/Failure mapping (PROTOCOL.md error
// model). Refusals carry the current fence in ErrorInfo metadata as a
// decimal string, so a client can branch on reason and read `fence`.
import { Failure } from '@fencer/server-kit';
import type { AdvanceFenceResponse, ReadResponse, WriteResponse } from '@fencer/proto';
import type { AdvanceOutcome, ReadOutcome, WriteOutcome } from '../core/sink-engine.js';

/** APPLIED/REPLAYED become a response; STALE_TOKEN, TOKEN_NOT_ISSUED, OWNER_MISMATCH, RESULT_CONFLICT are thrown as Failure. */
export function writeResponseOrThrow(outcome: WriteOutcome, resource: string): WriteResponse {
  switch (outcome.kind) {
    case 'applied':
      return { outcome: 'APPLIED', fence: outcome.fence.toString() };
    case 'replayed':
      return { outcome: 'REPLAYED', fence: outcome.fence.toString() };
    case 'stale':
      throw new Failure(
        'STALE_TOKEN',
        `token is below the fence ${outcome.fence} of ${resource}: this writer was fenced out`,
        { fence: outcome.fence.toString() },
      );
    case 'not-issued':
      throw new Failure(
        'TOKEN_NOT_ISSUED',
        `token is above the fence ${outcome.fence} of ${resource}: it was never issued`,
        { fence: outcome.fence.toString() },
      );
    case 'owner-mismatch':
      // The owner's identity is not told: the caller has no business with it.
      throw new Failure(
        'OWNER_MISMATCH',
        `the fence ${outcome.fence} of ${resource} was granted to another owner: a token is not a capability (A5)`,
        { fence: outcome.fence.toString() },
      );
    case 'conflict':
      throw new Failure('RESULT_CONFLICT', 'a different payload is already stored under this result_id');
  }
}

/** Success (moved, or the same grant's retry) becomes a response; FENCE_REGRESSION is thrown. */
export function advanceResponseOrThrow(outcome: AdvanceOutcome, resource: string): AdvanceFenceResponse {
  switch (outcome.kind) {
    case 'advanced':
    case 'retry-same-grant':
      return { fence: outcome.fence.toString() };
    case 'regression':
      throw new Failure('FENCE_REGRESSION', `the fence of ${resource} is already ${outcome.fence}`, {
        fence: outcome.fence.toString(),
      });
  }
}

/** A found result becomes a response; a missing one is RESULT_NOT_FOUND. */
export function readResponseOrThrow(outcome: ReadOutcome): ReadResponse {
  switch (outcome.kind) {
    case 'found':
      return {
        payload: Buffer.from(outcome.payload.buffer, outcome.payload.byteOffset, outcome.payload.byteLength),
        token: outcome.token.toString(),
      };
    case 'not-found':
      throw new Failure('RESULT_NOT_FOUND', 'no result is stored under this resource and result_id');
  }
}
