// A1/A2/A4: bearer tokens, or the verified client certificate of a mutual
// TLS connection, map to (identity, role) by a credentials file; each RPC
// names the roles it admits. `--insecure` is an explicit choice. A7: the
// file is read the same way at start and on every reload, never blocking
// and never more than a bound; a call that outlives a reload (a stream) is
// judged again under the credentials that replaced its own.
import { createHash, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import type { PeerCertificate } from 'node:tls';
import type { Metadata } from '@grpc/grpc-js';
import { Failure } from './failure.js';
import { RequestCheck } from './validation.js';

/** Every role a credential can carry (A4 says which may call what). */
export const ROLES = ['coordinator', 'worker', 'admin'] as const;
/** A caller's role, from its credential. */
export type Role = (typeof ROLES)[number];

/** Who is calling. `identity` is null only when auth is off (`--insecure`). */
export type Principal =
  | { readonly authenticated: true; readonly identity: string; readonly role: Role }
  | { readonly authenticated: false; readonly identity: null; readonly role: null };

const ANONYMOUS: Principal = Object.freeze({ authenticated: false, identity: null, role: null });

/**
 * What the transport proved about a caller: grpc-js's server-side
 * `call.getAuthContext()`, which holds a peer certificate only when the TLS
 * handshake verified it against the server's --tls-ca.
 */
export interface PeerAuth {
  readonly sslPeerCertificate?: PeerCertificate | undefined;
}

/** Resolves and checks callers. Throws Failure UNAUTHENTICATED / PERMISSION_DENIED. */
export interface Authenticator {
  readonly enabled: boolean;
  authenticate(metadata: Metadata, peer?: PeerAuth): Principal;
  /**
   * Whether `principal` came from the credentials in force now. False once
   * a reload has replaced them (A7): then only reauthenticate can say
   * whether the caller still is who it was.
   */
  isCurrent(principal: Principal): boolean;
}

/** Auth off: every call is anonymous and every role check passes. */
export const insecureAuthenticator: Authenticator = Object.freeze({
  enabled: false,
  authenticate: () => ANONYMOUS,
  isCurrent: (principal: Principal) => principal === ANONYMOUS,
});

/** One entry of a credentials file. */
export interface Credential {
  token: string;
  identity: string;
  role: Role;
}

/** A credentials file or value that cannot be used; the message says why. */
export class CredentialsError extends Error {
  override name = 'CredentialsError';
}

/** The largest credentials file read (A7): far beyond any real one, and what one reload may cost. */
export const MAX_CREDENTIALS_FILE_BYTES = 1024 * 1024;

/**
 * The text of the regular file at `path` (a symlink is followed), read
 * without ever waiting for a writer and never more than
 * MAX_CREDENTIALS_FILE_BYTES (A7). Throws CredentialsError.
 */
function readCredentialsText(path: string): string {
  let fd: number;
  try {
    // Opening a FIFO without O_NONBLOCK waits for a writer, and this runs on
    // the event loop; for a regular file the flag changes nothing.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new CredentialsError(`cannot read credentials file ${path}: ${(error as Error).message}`);
  }
  try {
    // The opened descriptor, not the path: the path could be swapped for a
    // FIFO or a device between a check and the open.
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new CredentialsError(`credentials file ${path} is ${kindOf(stat)}, not a regular file`);
    // Reading one byte past the bound, rather than trusting the size fstat
    // gave, also catches a file that grows while it is read.
    const buffer = Buffer.alloc(MAX_CREDENTIALS_FILE_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > MAX_CREDENTIALS_FILE_BYTES)
      throw new CredentialsError(`credentials file ${path} is larger than ${MAX_CREDENTIALS_FILE_BYTES} bytes`);
    return buffer.toString('utf8', 0, length);
  } catch (error) {
    if (error instanceof CredentialsError) throw error;
    throw new CredentialsError(`cannot read credentials file ${path}: ${(error as Error).message}`);
  } finally {
    closeSync(fd);
  }
}

/** What a file that is not a regular one is, for the operator. */
function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isSocket()) return 'a socket';
  return 'a special file';
}

/**
 * Parses and checks a credentials file: a JSON array of at least one
 * {token, identity, role}, read by readCredentialsText's rules (A7).
 * Throws CredentialsError saying what is wrong.
 */
export function readCredentialsFile(path: string): Credential[] {
  const text = readCredentialsText(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CredentialsError(`credentials file ${path} is not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed))
    throw new CredentialsError(`credentials file ${path} must hold a JSON array of {token, identity, role}`);
  // A7: with no credential every call would be refused; far likelier a
  // truncated or half-written file than a wish to lock everyone out.
  if (parsed.length === 0) throw new CredentialsError(`credentials file ${path} holds no credential`);
  const seen = new Set<string>();
  return parsed.map((entry: unknown, index) => {
    const where = `credentials file ${path}, entry ${index}`;
    if (typeof entry !== 'object' || entry === null) throw new CredentialsError(`${where}: must be an object`);
    const { token, identity, role } = entry as Record<string, unknown>;
    if (typeof token !== 'string' || token.length < 16)
      throw new CredentialsError(`${where}: token must be a string of at least 16 characters`);
    // A bearer header cannot carry blanks inside the token, so such an entry could never match.
    if (/\s/.test(token)) throw new CredentialsError(`${where}: token must not contain whitespace`);
    if (typeof identity !== 'string') throw new CredentialsError(`${where}: identity must be a string`);
    // A3: a worker's owner_id must equal its identity, so an identity that
    // V2 refuses as an owner_id ("alice ", a noncharacter) could never act.
    const check = new RequestCheck();
    check.id('identity', identity);
    try {
      check.done();
    } catch (error) {
      throw new CredentialsError(`${where}: ${(error as Failure).message} (it is an owner_id under A3)`);
    }
    if (!ROLES.includes(role as Role)) throw new CredentialsError(`${where}: role must be one of ${ROLES.join(', ')}`);
    if (seen.has(token)) throw new CredentialsError(`${where}: token is listed twice`);
    seen.add(token);
    return { token, identity, role: role as Role };
  });
}

const digest = (token: string): Buffer => createHash('sha256').update(token).digest();

/**
 * A2 against a fixed set of credentials. A bearer token, when one is sent,
 * decides alone (a bad one is refused, never replaced by the certificate).
 * Without one, a client certificate verified by mutual TLS stands in for it:
 * its subject CN (SANs are not consulted) is looked up as an `identity` of
 * the credentials, whose role it gets. A CN that is missing, repeated, not
 * listed, or listed with two different roles is UNAUTHENTICATED.
 */
export function credentialsAuthenticator(credentials: readonly Credential[]): Authenticator {
  // Compare fixed-size digests in constant time so response timing does not
  // leak how much of a guessed token was right.
  const entries = credentials.map((c) => ({
    digest: digest(c.token),
    principal: Object.freeze({ authenticated: true as const, identity: c.identity, role: c.role }),
  }));
  // A certificate names an identity, not a token: an identity listed with
  // two roles gives it no one role to act in, so it maps to null.
  const byIdentity = new Map<string, Principal | null>();
  for (const { principal } of entries) {
    const known = byIdentity.get(principal.identity);
    byIdentity.set(principal.identity, known === undefined || known?.role === principal.role ? principal : null);
  }
  const byBearer = (headers: readonly unknown[]): Principal => {
    // Two credentials (say a proxy's and the client's) name no one caller:
    // picking either would let the order of headers choose the identity.
    if (headers.length > 1)
      throw new Failure('UNAUTHENTICATED', 'more than one "authorization" value (expected one "Bearer <token>")');
    const header = headers[0];
    const match = typeof header === 'string' ? /^\s*Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) throw new Failure('UNAUTHENTICATED', 'malformed "authorization" metadata (expected "Bearer <token>")');
    const presented = digest(match[1]!);
    let found: Principal | undefined;
    for (const entry of entries) if (timingSafeEqual(entry.digest, presented)) found = entry.principal;
    if (!found) throw new Failure('UNAUTHENTICATED', 'unknown bearer token');
    return found;
  };
  const byCertificate = (certificate: PeerCertificate): Principal => {
    // Node gives an array when the subject holds CN more than once.
    const commonName: unknown = certificate.subject?.CN;
    if (typeof commonName !== 'string' || commonName.length === 0)
      throw new Failure('UNAUTHENTICATED', 'the client certificate has no single subject CN to take as identity');
    const principal = byIdentity.get(commonName);
    if (principal === undefined)
      throw new Failure('UNAUTHENTICATED', "the client certificate's CN is not an identity of the credentials file");
    if (principal === null)
      throw new Failure(
        'UNAUTHENTICATED',
        "the client certificate's CN has more than one role in the credentials file; send a bearer token",
      );
    return principal;
  };
  const issued = new Set<Principal>(entries.map((entry) => entry.principal));
  return Object.freeze({
    enabled: true,
    isCurrent: (principal: Principal) => issued.has(principal),
    authenticate(metadata: Metadata, peer?: PeerAuth): Principal {
      const headers = metadata.get('authorization');
      if (headers.length > 0) return byBearer(headers);
      if (peer?.sslPeerCertificate) return byCertificate(peer.sslPeerCertificate);
      throw new Failure(
        'UNAUTHENTICATED',
        'missing "authorization" metadata (expected "Bearer <token>") and no client certificate',
      );
    },
  });
}

/**
 * A7: who a call authenticated as `opened` (from its `metadata` and `peer`)
 * is now, for a call that outlives a reload (a stream's next message).
 * While the credentials it was authenticated under are in force, `opened`
 * itself, at no cost. After a reload, the call's own credential (its bearer
 * token, or without one its certificate) must still authenticate as the
 * same identity with the same role: a token that was removed, or whose
 * identity or role changed, is UNAUTHENTICATED, even if the identity keeps
 * another token (a rotation retires the old one). What else the reload
 * changed does not matter. Throws Failure UNAUTHENTICATED.
 */
export function reauthenticate(
  authenticator: Authenticator,
  opened: Principal,
  metadata: Metadata,
  peer?: PeerAuth,
): Principal {
  if (authenticator.isCurrent(opened)) return opened;
  let now: Principal | undefined;
  try {
    now = authenticator.authenticate(metadata, peer);
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
  }
  // The call's method admitted its role when it opened (A4): another role,
  // even one the method admits too, is another credential.
  if (now === undefined || now.identity !== opened.identity || now.role !== opened.role)
    throw new Failure(
      'UNAUTHENTICATED',
      'a credentials reload removed or changed the credential this call was opened with (A7)',
    );
  return now;
}

/** A4: throws PERMISSION_DENIED unless auth is off or the caller's role is admitted. */
export function authorize(principal: Principal, method: string, roles: readonly Role[]): void {
  if (!principal.authenticated || roles.includes(principal.role)) return;
  throw new Failure(
    'PERMISSION_DENIED',
    `role ${principal.role} may not call ${method} (allowed: ${roles.join(', ')})`,
    {
      role: principal.role,
      method,
    },
  );
}

/** A3: with auth on, a worker acts only as itself. Throws OWNER_MISMATCH. */
export function requireOwner(principal: Principal, ownerId: string): void {
  if (principal.authenticated && principal.identity !== ownerId) {
    throw new Failure(
      'OWNER_MISMATCH',
      `owner_id must be the caller's identity ${JSON.stringify(principal.identity)}`,
      {
        identity: principal.identity,
      },
    );
  }
}

// Keyed by the call's own Metadata object, which grpc-js hands unchanged from
// the call gate's interceptor to the handler: a caller can send headers, but
// never this object, so it cannot claim a principal.
const principals = new WeakMap<Metadata, Principal>();

/** Records who sent `metadata`; only the call gate (A6) calls this, once per call. */
export function rememberPrincipal(metadata: Metadata, principal: Principal): void {
  principals.set(metadata, principal);
}

/**
 * Who sent `metadata`, as the call gate authenticated it before the request
 * was read (A6). Throws (a bug, so INTERNAL) for a call that did not pass it.
 */
export function principalOf(metadata: Metadata): Principal {
  const principal = principals.get(metadata);
  if (principal === undefined) throw new Error('call reached a handler without passing the call gate');
  return principal;
}
