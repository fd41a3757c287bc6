import { describe, expect, it } from 'vitest';
import { Metadata } from '@grpc/grpc-js';
import {
  decodeStatusDetails,
  encodeStatusDetails,
  ERROR_DOMAIN,
  remoteFailure,
  REASON_KEY,
  STATUS_DETAILS_KEY,
} from '@fencer/proto';

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

  it('reads reason, metadata and field violations from a fencing.v1 ErrorInfo', () => {
    const metadata = new Metadata();
    metadata.set(
      STATUS_DETAILS_KEY,
      encodeStatusDetails({
        code: 3,
        message: 'bad',
        errorInfo: { reason: 'INVALID_FIELD', domain: ERROR_DOMAIN, metadata: { field: 'token' } },
        fieldViolations: [{ field: 'token', description: 'must be greater than 0' }],
      }),
    );
    expect(remoteFailure({ code: 3, details: 'bad', metadata })).toEqual({
      code: 3,
      reason: 'INVALID_FIELD',
      metadata: { field: 'token' },
      fieldViolations: [{ field: 'token', description: 'must be greater than 0' }],
      message: 'bad',
    });
  });

  it('ignores an ErrorInfo of another domain: its reasons are not ours', () => {
    const metadata = new Metadata();
    metadata.set(REASON_KEY, 'SINK_UNAVAILABLE');
    metadata.set(
      STATUS_DETAILS_KEY,
      encodeStatusDetails({
        code: 14,
        message: 'upstream',
        errorInfo: { reason: 'STALE_TOKEN', domain: 'proxy.example.com', metadata: { fence: '9' } },
      }),
    );
    expect(remoteFailure({ code: 14, details: 'upstream', metadata })).toMatchObject({
      reason: 'SINK_UNAVAILABLE',
      metadata: {},
    });
  });

  it('reads the reason from the trailer when the details are garbage', () => {
    const metadata = new Metadata();
    metadata.set(REASON_KEY, 'STALE_TOKEN');
    metadata.set(STATUS_DETAILS_KEY, Buffer.from([0xff, 0xff, 0xff]));
    expect(remoteFailure({ code: 9, details: 'x', metadata })).toMatchObject({ code: 9, reason: 'STALE_TOKEN' });
  });
});
