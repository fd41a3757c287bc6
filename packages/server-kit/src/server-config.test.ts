import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { Failure } from './failure.js';
import { authenticatorFor, serverAuth } from './server-config.js';

const dir = mkdtempSync(join(tmpdir(), 'fencer-server-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const COORDINATOR = { token: 'coordinator-token-0123456789', identity: 'coordinator', role: 'coordinator' };
const ALICE = { token: 'alice-token-0123456789', identity: 'alice', role: 'worker' };
const BOB = { token: 'bob-token-0123456789', identity: 'bob', role: 'worker' };

const bearer = (token: string) => {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
};
/** The identity a token authenticates as, or the refusal's reason. */
const who = (authenticate: (metadata: Metadata) => { identity: string | null }, token: string) => {
  try {
    return authenticate(bearer(token)).identity;
  } catch (error) {
    return (error as Failure).reason;
  }
};

describe('reloading credentials (A1, A2)', () => {
  const path = join(dir, 'credentials.json');
  const write = (entries: object[]) => writeFileSync(path, JSON.stringify(entries));

  it('swaps in a valid file for later calls, and keeps the credentials in force when the file breaks a rule', () => {
    write([COORDINATOR, ALICE]);
    const rule = { requiredRole: 'coordinator' as const, why: 'AdvanceFence would be impossible (A1)' };
    const authenticator = authenticatorFor(serverAuth({ credentials: path }, rule));
    const authenticate = (metadata: Metadata) => authenticator.authenticate(metadata);

    write([COORDINATOR, BOB]);
    expect(authenticator.reload()).toEqual({ kind: 'reloaded', path, credentials: 2 });
    expect([who(authenticate, ALICE.token), who(authenticate, BOB.token)]).toEqual(['UNAUTHENTICATED', 'bob']);

    // The rule of the start-up applies to every reload: a sink must keep a coordinator credential.
    write([ALICE]);
    expect(authenticator.reload()).toEqual({
      kind: 'kept',
      path,
      reason: `credentials file ${path} has no coordinator credential; AdvanceFence would be impossible (A1)`,
    });
    expect([who(authenticate, ALICE.token), who(authenticate, BOB.token)]).toEqual(['UNAUTHENTICATED', 'bob']);
  });

  it('has nothing to reload with --insecure', () => {
    expect(authenticatorFor(serverAuth({ insecure: true })).reload()).toEqual({ kind: 'insecure' });
  });
});
