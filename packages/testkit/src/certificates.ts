// Certificates for TLS tests, made at test time with Debian's `openssl`: a CA,
// server certificates for 127.0.0.1/localhost, and client certificates,
// valid or already expired. `openssl ca` is used for every signature because
// it alone (in OpenSSL 3.0) can date a certificate in the past.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate and its unencrypted private key, as PEM files. */
export interface CertFiles {
  readonly cert: string;
  readonly key: string;
}

/** A certificate authority on disk that issues certificates signed by itself. */
export interface TestCa {
  /** The CA's own certificate (PEM), what `--tls-ca` takes. */
  readonly cert: string;
  /** A server certificate with SAN IP:127.0.0.1 and DNS:localhost (CN `name`). */
  issueServer(name?: string): CertFiles;
  /**
   * A client certificate whose subject CN is `commonName`; `expired` dates it
   * wholly in the past (valid in 2020 only), so a verifier must refuse it.
   */
  issueClient(commonName: string, options?: { expired?: boolean }): CertFiles;
}

const CURVE = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: readonly string[]): void {
  // stdio piped, so openssl's chatter does not interleave with test output;
  // a failure throws with its stderr in the message.
  execFileSync('/usr/bin/openssl', args, { stdio: 'pipe' });
}

/**
 * Creates a self-signed CA named `name` in `dir/name` (which must not hold
 * one yet). Each issue* call runs openssl twice; throws if openssl fails.
 */
export function createTestCa(dir: string, name = 'fencer-test-ca'): TestCa {
  const home = join(dir, name);
  mkdirSync(join(home, 'issued'), { recursive: true });
  const caCert = join(home, 'ca.crt');
  const caKey = join(home, 'ca.key');
  openssl([
    'req',
    '-x509',
    ...CURVE,
    '-keyout',
    caKey,
    '-out',
    caCert,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  writeFileSync(join(home, 'index.txt'), '');
  writeFileSync(join(home, 'serial'), '1000\n');
  const config = join(home, 'openssl.cnf');
  writeFileSync(
    config,
    [
      '[ca]',
      'default_ca = test_ca',
      '[test_ca]',
      `database = ${join(home, 'index.txt')}`,
      `new_certs_dir = ${join(home, 'issued')}`,
      `serial = ${join(home, 'serial')}`,
      `certificate = ${caCert}`,
      `private_key = ${caKey}`,
      'default_md = sha256',
      'policy = any_name',
      // Tests issue the same CN more than once (a valid and an expired alice).
      'unique_subject = no',
      '[any_name]',
      'commonName = supplied',
      '',
    ].join('\n'),
  );

  const issue = (file: string, commonName: string, extensions: string[], validity: string[]): CertFiles => {
    const key = join(home, `${file}.key`);
    const csr = join(home, `${file}.csr`);
    const cert = join(home, `${file}.crt`);
    const ext = join(home, `${file}.ext`);
    openssl(['req', '-new', ...CURVE, '-keyout', key, '-out', csr, '-subj', `/CN=${commonName}`]);
    writeFileSync(ext, ['basicConstraints = CA:FALSE', ...extensions, ''].join('\n'));
    openssl(['ca', '-batch', '-notext', '-config', config, '-in', csr, '-out', cert, '-extfile', ext, ...validity]);
    return { cert, key };
  };
  const valid = ['-days', '2'];
  let issued = 0;
  return {
    cert: caCert,
    issueServer: (serverName = 'localhost') =>
      issue(
        `server-${++issued}`,
        serverName,
        [
          'keyUsage = critical, digitalSignature',
          'extendedKeyUsage = serverAuth',
          'subjectAltName = IP:127.0.0.1, DNS:localhost',
        ],
        valid,
      ),
    issueClient: (commonName, options = {}) =>
      issue(
        `client-${++issued}`,
        commonName,
        ['keyUsage = critical, digitalSignature', 'extendedKeyUsage = clientAuth'],
        options.expired ? ['-startdate', '20200101000000Z', '-enddate', '20200102000000Z'] : valid,
      ),
  };
}

/** Reads PEM files into what a client's `tls` option takes (ClientTls). */
export function readClientTls(files: { readonly ca?: string; readonly cert?: string; readonly key?: string }): {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
} {
  return Object.fromEntries(Object.entries(files).map(([name, path]) => [name, readFileSync(path)]));
}
