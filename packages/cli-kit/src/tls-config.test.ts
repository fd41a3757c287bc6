// The --tls-* flags read once for every process: each bad file or missing
// partner is a ConfigError naming the flag, before anything listens.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestCa, tempDir } from '@fencer/testkit';
import { ConfigError } from './config-error.js';
import { clientTls, serverTls, tlsOptions } from './tls-config.js';

const dir = tempDir('fencer-tls-config-');
afterAll(() => dir.remove());
const ca = createTestCa(dir.path);
const server = ca.issueServer();
const other = ca.issueClient('someone-else');
const notPem = join(dir.path, 'not-pem.txt');
writeFileSync(notPem, 'hello\n');

const refusal = (read: () => unknown): string => {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('serverTls', () => {
  it('no flags: plaintext; cert and key: TLS; with a CA: mutual TLS', () => {
    expect(serverTls({})).toBeNull();
    expect(serverTls({ tlsCert: server.cert, tlsKey: server.key })?.clientCa).toBeNull();
    expect(serverTls({ tlsCert: server.cert, tlsKey: server.key, tlsCa: ca.cert })?.clientCa).toBeInstanceOf(Buffer);
  });

  it.each([
    ['a cert without its key', { tlsCert: server.cert }, '--tls-cert and --tls-key go together'],
    ['a key without its cert', { tlsKey: server.key }, '--tls-cert and --tls-key go together'],
    ['a CA without cert and key', { tlsCa: ca.cert }, '--tls-ca needs --tls-cert and --tls-key'],
    ['a missing cert', { tlsCert: join(dir.path, 'absent.pem'), tlsKey: server.key }, 'cannot read --tls-cert'],
    ['a cert that is not PEM', { tlsCert: notPem, tlsKey: server.key }, 'is not a PEM certificate'],
    ['a key that is not PEM', { tlsCert: server.cert, tlsKey: notPem }, 'is not an unencrypted PEM private key'],
    ['another certificate’s key', { tlsCert: server.cert, tlsKey: other.key }, 'is not the private key of'],
    ['a CA that is not PEM', { tlsCert: server.cert, tlsKey: server.key, tlsCa: notPem }, '--tls-ca'],
  ])('refuses %s', (_name, flags, message) => {
    expect(refusal(() => serverTls(flags))).toContain(message);
  });

  it('refuses an unreadable key (here a directory), naming the flag, the file and why', () => {
    expect(refusal(() => serverTls({ tlsCert: server.cert, tlsKey: dir.path }))).toBe(
      `cannot read --tls-key ${dir.path}: EISDIR`,
    );
  });
});

describe('clientTls', () => {
  it('no flags: plaintext; a CA alone: TLS; a cert and key: a client certificate too', () => {
    expect(clientTls({})).toBeUndefined();
    expect(Object.keys(clientTls({ tlsCa: ca.cert })!)).toEqual(['ca']);
    expect(Object.keys(clientTls({ tlsCa: ca.cert, tlsCert: other.cert, tlsKey: other.key })!).sort()).toEqual([
      'ca',
      'cert',
      'key',
    ]);
  });

  it('names the prefixed flags of a second connection', () => {
    expect(refusal(() => clientTls({ tlsCert: other.cert }, 'sink-'))).toBe(
      '--sink-tls-cert and --sink-tls-key go together: give both or neither',
    );
  });
});

describe('tlsOptions', () => {
  it('each flag is settable by its environment variable', () => {
    expect(tlsOptions('client', 'FENCER_COORDINATOR', 'sink-').map((o) => [o.long, o.envVar])).toEqual([
      ['--sink-tls-cert', 'FENCER_COORDINATOR_SINK_TLS_CERT'],
      ['--sink-tls-key', 'FENCER_COORDINATOR_SINK_TLS_KEY'],
      ['--sink-tls-ca', 'FENCER_COORDINATOR_SINK_TLS_CA'],
    ]);
  });
});
