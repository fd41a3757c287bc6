import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PeerCertificate } from 'node:tls';
import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  authorize,
  credentialsAuthenticator,
  CredentialsError,
  MAX_CREDENTIALS_FILE_BYTES,
  reauthenticate,
  readCredentialsFile,
  requireOwner,
  type Credential,
  type PeerAuth,
} from './auth.js';
import { Failure } from './failure.js';

const dir = mkdtempSync(join(tmpdir(), 'fencer-auth-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const withAuth = (value?: string) => {
  const metadata = new Metadata();
  if (value !== undefined) metadata.set('authorization', value);
  return metadata;
};
const reasonOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return (error as Failure).reason;
  }
  return 'none';
};

const VALID = '[{"token":"0123456789abcdefXYZ","identity":"c","role":"coordinator"}]';

describe('credentials file (A2)', () => {
  it.each([
    ['not JSON', '{'],
    ['not an array', '{}'],
    ['short token', '[{"token":"short","identity":"c","role":"coordinator"}]'],
    ['token with a blank', '[{"token":"0123456789 abcdefXYZ","identity":"c","role":"worker"}]'],
    ['unknown role', '[{"token":"0123456789abcdefXYZ","identity":"c","role":"root"}]'],
    // A3 + V2: an identity acts as owner_id, so one that V2 refuses could never acquire.
    ['empty identity', '[{"token":"0123456789abcdefXYZ","identity":"","role":"worker"}]'],
    ['identity with a trailing blank', '[{"token":"0123456789abcdefXYZ","identity":"alice ","role":"worker"}]'],
    ['identity with a noncharacter', '[{"token":"0123456789abcdefXYZ","identity":"a\\uFFFE","role":"worker"}]'],
    [
      'duplicate token',
      '[{"token":"0123456789abcdefXYZ","identity":"a","role":"worker"},{"token":"0123456789abcdefXYZ","identity":"b","role":"admin"}]',
    ],
  ])('rejects %s with a CredentialsError', (name, text) => {
    expect(() => readCredentialsFile(file(`${name}.json`, text))).toThrow(CredentialsError);
  });

  it('rejects a missing file with a CredentialsError', () => {
    expect(() => readCredentialsFile(join(dir, 'absent.json'))).toThrow(CredentialsError);
  });

  // FIFOs and devices are refused the same way (fstat of the opened file);
  // they are tested on real processes (cli/test/credentials-reload.test.ts),
  // where the old way of reading them hangs a child, not the test runner.
  it.each([
    ['A7: no credential at all', () => file('empty.json', '[]'), /holds no credential/],
    ['A7: a directory', () => (mkdirSync(join(dir, 'directory')), join(dir, 'directory')), /is a directory/],
    [
      'A7: valid credentials past MAX_CREDENTIALS_FILE_BYTES',
      () => file('large.json', `${VALID}${' '.repeat(MAX_CREDENTIALS_FILE_BYTES + 1 - VALID.length)}`),
      /larger than 1048576 bytes/,
    ],
  ])('rejects %s, saying why', (_name, make, reason) => {
    expect(() => readCredentialsFile(make())).toThrow(reason);
  });

  it('A7: reads a file of exactly MAX_CREDENTIALS_FILE_BYTES', () => {
    const path = file('at-bound.json', `${VALID}${' '.repeat(MAX_CREDENTIALS_FILE_BYTES - VALID.length)}`);
    expect(readCredentialsFile(path)).toEqual(JSON.parse(VALID));
  });
});

describe('bearer authentication and roles (A2, A3, A4)', () => {
  const auth = credentialsAuthenticator([
    { token: 'coordinator-token-0123', identity: 'coord', role: 'coordinator' },
    { token: 'worker-token-0123456789', identity: 'w1', role: 'worker' },
  ]);

  it('maps a known token to its identity and role', () => {
    expect(auth.authenticate(withAuth('Bearer worker-token-0123456789'))).toMatchObject({
      identity: 'w1',
      role: 'worker',
    });
  });

  it.each([
    [undefined],
    ['Bearer nope-nope-nope-nope'],
    ['Basic d29ya2VyOng='],
    ['Bearer '],
    ['worker-token-0123456789'],
  ])('refuses %s as UNAUTHENTICATED', (header) => {
    expect(reasonOf(() => auth.authenticate(withAuth(header)))).toBe('UNAUTHENTICATED');
  });

  it('refuses two authorization values as UNAUTHENTICATED, even when one is valid', () => {
    const metadata = withAuth('Bearer worker-token-0123456789');
    metadata.add('authorization', 'Bearer coordinator-token-0123');
    expect(reasonOf(() => auth.authenticate(metadata))).toBe('UNAUTHENTICATED');
  });

  it('accepts the scheme in any case and blanks around the token', () => {
    expect(auth.authenticate(withAuth('  bearer   worker-token-0123456789 '))).toMatchObject({ identity: 'w1' });
  });

  it('refuses a known identity with the wrong role as PERMISSION_DENIED', () => {
    const worker = auth.authenticate(withAuth('Bearer worker-token-0123456789'));
    expect(reasonOf(() => authorize(worker, 'AdvanceFence', ['coordinator']))).toBe('PERMISSION_DENIED');
    expect(reasonOf(() => authorize(worker, 'Write', ['worker']))).toBe('none');
  });

  it('lets a worker act only as itself', () => {
    const worker = auth.authenticate(withAuth('Bearer worker-token-0123456789'));
    expect(reasonOf(() => requireOwner(worker, 'w2'))).toBe('OWNER_MISMATCH');
    expect(reasonOf(() => requireOwner(worker, 'w1'))).toBe('none');
  });
});

describe('client certificates in place of a bearer token (A2, mutual TLS)', () => {
  const auth = credentialsAuthenticator([
    { token: 'coordinator-token-0123', identity: 'coord', role: 'coordinator' },
    { token: 'worker-token-0123456789', identity: 'w1', role: 'worker' },
    { token: 'worker-token-again-0123', identity: 'w1', role: 'worker' },
    { token: 'ops-worker-token-01234', identity: 'ops', role: 'worker' },
    { token: 'ops-admin-token-012345', identity: 'ops', role: 'admin' },
  ]);
  // What grpc-js's getAuthContext() holds after a verified handshake (only the fields read here).
  const peer = (subject: Record<string, unknown>) => ({
    sslPeerCertificate: { subject, subjectaltname: 'DNS:w1' } as unknown as PeerCertificate,
  });

  it("takes the subject CN as the identity, with that identity's role", () => {
    expect(auth.authenticate(withAuth(), peer({ CN: 'coord', O: 'fencer' }))).toEqual({
      authenticated: true,
      identity: 'coord',
      role: 'coordinator',
    });
    // Listed twice with one role is still one role.
    expect(auth.authenticate(withAuth(), peer({ CN: 'w1' }))).toMatchObject({ identity: 'w1', role: 'worker' });
  });

  it.each([
    ['a CN not in the credentials file', { CN: 'mallory' }],
    ['no CN (a SAN alone does not count)', { O: 'fencer' }],
    ['two CNs', { CN: ['w1', 'coord'] }],
    ['an identity listed with two roles', { CN: 'ops' }],
  ])('refuses %s as UNAUTHENTICATED', (_name, subject) => {
    expect(reasonOf(() => auth.authenticate(withAuth(), peer(subject)))).toBe('UNAUTHENTICATED');
  });

  it('a bearer token wins over the certificate, and a bad one is not rescued by it', () => {
    expect(auth.authenticate(withAuth('Bearer worker-token-0123456789'), peer({ CN: 'coord' }))).toMatchObject({
      identity: 'w1',
    });
    expect(reasonOf(() => auth.authenticate(withAuth('Bearer nope-nope-nope-nope'), peer({ CN: 'coord' })))).toBe(
      'UNAUTHENTICATED',
    );
  });

  it('without a verified certificate (plaintext, or TLS without --tls-ca) there is nothing to stand in', () => {
    expect(reasonOf(() => auth.authenticate(withAuth(), {}))).toBe('UNAUTHENTICATED');
  });
});

describe('a call that outlives a reload (A7)', () => {
  const A: Credential = { token: 'worker-a-token-0123456789', identity: 'a', role: 'worker' };
  const B: Credential = { token: 'worker-b-token-0123456789', identity: 'b', role: 'worker' };
  const before = credentialsAuthenticator([A, B]);
  const certificate = (CN: string): PeerAuth => ({ sslPeerCertificate: { subject: { CN } } as PeerCertificate });
  const opened = (metadata: Metadata, peer?: PeerAuth) => before.authenticate(metadata, peer);

  it('goes on at no cost while the credentials it was opened under are in force', () => {
    const principal = opened(withAuth(`Bearer ${A.token}`));
    expect(reauthenticate(before, principal, withAuth('Bearer a-token-never-looked-at'))).toBe(principal);
  });

  // 'none': the call goes on as the same identity and role (reauthenticate throws otherwise).
  it.each([
    ['another entry changed', [A, { ...B, role: 'admin' }], 'none'],
    ['its token was removed', [B], 'UNAUTHENTICATED'],
    ['its token now has another role', [{ ...A, role: 'admin' }, B], 'UNAUTHENTICATED'],
    ['its token now names another identity', [{ ...A, identity: 'b' }, B], 'UNAUTHENTICATED'],
    ['its identity has a new token instead', [{ ...A, token: 'worker-a-new-token-01234' }, B], 'UNAUTHENTICATED'],
  ] as const)('a bearer stream after a reload where %s: %s', (_name, after, expected) => {
    const metadata = withAuth(`Bearer ${A.token}`);
    const principal = opened(metadata);
    expect(reasonOf(() => reauthenticate(credentialsAuthenticator(after), principal, metadata))).toBe(expected);
  });

  it.each([
    ['its identity keeps its role under other tokens', [{ ...A, token: 'worker-a-new-token-01234' }, B], 'none'],
    ['its identity was removed', [B], 'UNAUTHENTICATED'],
    [
      'its identity now has two roles',
      [A, { ...A, token: 'worker-a-admin-token-0123', role: 'admin' }],
      'UNAUTHENTICATED',
    ],
  ] as const)('a certificate stream after a reload where %s: %s', (_name, after, expected) => {
    const principal = opened(withAuth(), certificate('a'));
    const reloaded = credentialsAuthenticator(after);
    expect(reasonOf(() => reauthenticate(reloaded, principal, withAuth(), certificate('a')))).toBe(expected);
  });
});
