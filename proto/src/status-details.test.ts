import { describe, expect, it } from 'vitest';
import { Metadata } from '@grpc/grpc-js';
import { decodeStatusDetails, encodeStatusDetails, remoteFailure, REASON_KEY, STATUS_DETAILS_KEY } from '@fencer/proto';

describe('google.rpc.Status details', () => {
  it('round-trips ErrorInfo and BadRequest', () => {
    const bytes = encodeStatusDetails({
      code: 3,
      message: 'bad',
      errorInfo: { reason: 'INVALID_FIELD', domain: 'fencing.v1', metadata: { field: 'token' } },
      fieldViolations: [{ field: 'token', description: 'must be greater than 0' }],
    });
    expect(decodeStatusDetails(bytes)).toEqual({
      code: 3,
      message: 'bad',
      errorInfo: { reason: 'INVALID_FIELD', domain: 'fencing.v1', metadata: { field: 'token' } },
      fieldViolations: [{ field: 'token', description: 'must be greater than 0' }],
    });
  });

  it('reads the reason from the trailer when the details are garbage', () => {
    const metadata = new Metadata();
    metadata.set(REASON_KEY, 'STALE_TOKEN');
    metadata.set(STATUS_DETAILS_KEY, Buffer.from([0xff, 0xff, 0xff]));
    expect(remoteFailure({ code: 9, details: 'x', metadata })).toMatchObject({ code: 9, reason: 'STALE_TOKEN' });
  });
});
