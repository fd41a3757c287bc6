// The --tls-* flags of every fencer process, defined and read once. A server
// serves TLS with --tls-cert/--tls-key and, given --tls-ca, requires client
// certificates signed by that CA (mutual TLS, A2); a client trusts --tls-ca
// and presents --tls-cert/--tls-key to a server that requires one. Every
// file is read and parsed at start, so a bad one is a ConfigError then, not
// a failed handshake later.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Option } from 'commander';
import type { ClientTls } from '@fencer/proto';
import { ConfigError } from './config-error.js';

/** The --tls-* file paths as commander parses them, each optional. */
export interface TlsFlags {
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
  tlsCa?: string | undefined;
}

/** A server's TLS, as PEM. */
export interface ServerTls {
  /** Certificate chain and its private key, checked to match. */
  readonly cert: Buffer;
  readonly key: Buffer;
  /** Mutual TLS: the handshake demands a client certificate signed by this CA. Null: none is asked for. */
  readonly clientCa: Buffer | null;
}

/**
 * The options --<prefix>tls-cert, --<prefix>tls-key and --<prefix>tls-ca, each
 * also settable as <envPrefix>_<PREFIX>TLS_CERT, _KEY and _CA. `side` words
 * the help; `prefix` ('sink-') names a second connection of one process.
 */
export function tlsOptions(side: 'server' | 'client', envPrefix: string, prefix = ''): Option[] {
  const env = (name: string) => `${envPrefix}_${prefix.replaceAll('-', '_').toUpperCase()}TLS_${name}`;
  const help =
    side === 'server'
      ? {
          cert: 'PEM certificate chain to serve TLS with (with --tls-key)',
          key: 'PEM private key of --tls-cert',
          ca: "PEM CA: require client certificates it signed (mutual TLS; a certificate's CN may stand for a bearer token, A2)",
        }
      : {
          cert: `PEM client certificate, for a server that requires one (with --${prefix}tls-key)`,
          key: `PEM private key of --${prefix}tls-cert`,
          ca: "PEM CA that signed the server's certificate; any --tls-* flag turns TLS on (default roots: the system's)",
        };
  return [
    new Option(`--${prefix}tls-cert <file>`, help.cert).env(env('CERT')),
    new Option(`--${prefix}tls-key <file>`, help.key).env(env('KEY')),
    new Option(`--${prefix}tls-ca <file>`, help.ca).env(env('CA')),
  ];
}

/**
 * A server's TLS from its flags: null when none is given. --tls-cert and
 * --tls-key go together; --tls-ca needs them. Throws ConfigError for a
 * missing, unreadable or unparsable file, or a key that is not the
 * certificate's.
 */
export function serverTls(flags: TlsFlags): ServerTls | null {
  const pair = keyPair(flags, '');
  if (pair === null) {
    if (flags.tlsCa !== undefined) {
      throw new ConfigError('--tls-ca needs --tls-cert and --tls-key: client certificates are asked for only over TLS');
    }
    return null;
  }
  return Object.freeze({
    ...pair,
    clientCa: flags.tlsCa === undefined ? null : certificate('--tls-ca', flags.tlsCa).pem,
  });
}

/**
 * A client's TLS from its flags (`prefix` as in tlsOptions): undefined, for
 * plaintext, when none is given. --tls-cert and --tls-key go together.
 * Throws ConfigError like serverTls.
 */
export function clientTls(flags: TlsFlags, prefix = ''): ClientTls | undefined {
  const pair = keyPair(flags, prefix);
  if (pair === null && flags.tlsCa === undefined) return undefined;
  return Object.freeze({
    ...(flags.tlsCa === undefined ? {} : { ca: certificate(`--${prefix}tls-ca`, flags.tlsCa).pem }),
    ...pair,
  });
}

function keyPair(flags: TlsFlags, prefix: string): { cert: Buffer; key: Buffer } | null {
  const certFlag = `--${prefix}tls-cert`;
  const keyFlag = `--${prefix}tls-key`;
  if (flags.tlsCert === undefined && flags.tlsKey === undefined) return null;
  if (flags.tlsCert === undefined || flags.tlsKey === undefined) {
    throw new ConfigError(`${certFlag} and ${keyFlag} go together: give both or neither`);
  }
  const cert = certificate(certFlag, flags.tlsCert);
  const key = privateKey(keyFlag, flags.tlsKey);
  let matches: boolean;
  try {
    matches = cert.x509.checkPrivateKey(key.object);
  } catch {
    matches = false; // a key of another type than the certificate's
  }
  if (!matches) {
    throw new ConfigError(`${keyFlag} ${flags.tlsKey} is not the private key of ${certFlag} ${flags.tlsCert}`);
  }
  return { cert: cert.pem, key: key.pem };
}

function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

function certificate(flag: string, path: string): { pem: Buffer; x509: X509Certificate } {
  const pem = readPem(flag, path);
  try {
    return { pem, x509: new X509Certificate(pem) };
  } catch {
    throw new ConfigError(`${flag} ${path} is not a PEM certificate`);
  }
}

function privateKey(flag: string, path: string): { pem: Buffer; object: KeyObject } {
  const pem = readPem(flag, path);
  try {
    return { pem, object: createPrivateKey(pem) };
  } catch {
    throw new ConfigError(`${flag} ${path} is not an unencrypted PEM private key`);
  }
}
