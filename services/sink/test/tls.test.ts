// TLS and mutual TLS on real `fencer sink` processes, with certificates made
// at test time: a plaintext client cannot talk to a TLS sink; with --tls-ca
// the handshake refuses clients without a certificate the CA signed and in
// date; a verified certificate whose CN is a credentials identity stands in
// for a bearer token (A2), and a bearer token still wins.
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestCa,
  failureOf,
  loggedLines,
  readClientTls,
  runFencer,
  sinkCalls,
  startFencer,
  startSecuredSink,
  stopFencer,
  tempDir,
  writeTestCredentials,
  type FencerProcess,
  type SinkCalls,
  type TestCa,
} from '@fencer/testkit';

const CODE = { PERMISSION_DENIED: 7, UNAVAILABLE: 14, UNAUTHENTICATED: 16 };
const TOKENS = { coordinator: 'coordinator-token-0001', alice: 'alice-worker-token-0001' };

let dir: ReturnType<typeof tempDir>;
let ca: TestCa;
let tlsSink: FencerProcess;
let mutualSink: FencerProcess;
const clients: SinkCalls[] = [];

beforeAll(async () => {
  dir = tempDir('fencer-sink-tls-');
  ca = createTestCa(dir.path);
  const credentials = writeTestCredentials(dir.path, TOKENS);
  const server = ca.issueServer();
  [tlsSink, mutualSink] = await Promise.all([
    startSecuredSink(credentials, join(dir.path, 'tls'), { tls: server }),
    startSecuredSink(credentials, join(dir.path, 'mutual'), { tls: { ...server, clientCa: ca.cert } }),
  ]);
});

afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.all([tlsSink, mutualSink].flatMap((p) => (p ? [stopFencer(p)] : [])));
  dir?.remove();
});

/** A sink client; a refused handshake fails its calls fast instead of waiting out a long deadline. */
function connect(sink: FencerProcess, token: string | undefined, tls?: Parameters<typeof readClientTls>[0]) {
  const client = sinkCalls(sink.address, token, { timeoutMs: 5_000, ...(tls ? { tls: readClientTls(tls) } : {}) });
  clients.push(client);
  return client;
}

let unique = 0;
const fresh = (prefix: string) => `${prefix}-${++unique}`;

describe('TLS (--tls-cert, --tls-key)', () => {
  it('a plaintext client fails UNAVAILABLE; one trusting the CA works with a bearer token', async () => {
    const resource = fresh('tls');
    expect((await failureOf(connect(tlsSink, TOKENS.alice).getFence(resource))).code).toBe(CODE.UNAVAILABLE);
    const coordinator = connect(tlsSink, TOKENS.coordinator, { ca: ca.cert });
    expect(await coordinator.advance({ resource, token: '1', grant_id: 'g1' })).toEqual({ fence: '1' });
    const alice = connect(tlsSink, TOKENS.alice, { ca: ca.cert });
    const written = await alice.write({ resource, token: '1', result_id: 'r', payload: Buffer.from('x') });
    expect(written.outcome).toBe('APPLIED');
  });

  it('a client trusting another CA refuses the server (UNAVAILABLE)', async () => {
    const stranger = createTestCa(dir.path, 'stranger-ca');
    const failure = await failureOf(connect(tlsSink, TOKENS.alice, { ca: stranger.cert }).getFence('any'));
    expect(failure.code).toBe(CODE.UNAVAILABLE);
  });

  it('without --tls-ca no certificate is asked for, so a token is still needed', async () => {
    const client = connect(tlsSink, undefined, { ca: ca.cert, ...ca.issueClient('alice') });
    expect((await failureOf(client.getFence('any'))).code).toBe(CODE.UNAUTHENTICATED);
  });

  it('fencer health --tls-ca reports SERVING; without it the check fails', async () => {
    const health = await runFencer(['health', '--tls-ca', ca.cert, '--timeout-ms', '5000', tlsSink.address]);
    expect([health.code, health.stderr]).toEqual([0, '']);
    const plaintext = await runFencer(['health', '--timeout-ms', '5000', tlsSink.address]);
    expect(plaintext.code).toBe(1);
  });
});

describe('mutual TLS (--tls-ca)', () => {
  it('a client without a certificate is refused at the handshake, even with a valid bearer token', async () => {
    const failure = await failureOf(connect(mutualSink, TOKENS.alice, { ca: ca.cert }).getFence('any'));
    expect([failure.code, failure.reason]).toEqual([CODE.UNAVAILABLE, '']);
  });

  it('an untrusted and an expired client certificate are refused at the handshake; a valid one gets through', async () => {
    const untrusted = createTestCa(dir.path, 'untrusted-ca').issueClient('alice');
    const expired = ca.issueClient('alice', { expired: true });
    for (const certificate of [untrusted, expired]) {
      const failure = await failureOf(connect(mutualSink, TOKENS.alice, { ca: ca.cert, ...certificate }).getFence('x'));
      expect([failure.code, failure.reason]).toEqual([CODE.UNAVAILABLE, '']);
    }
    const valid = connect(mutualSink, TOKENS.alice, { ca: ca.cert, ...ca.issueClient('alice') });
    expect(await valid.getFence('x')).toEqual({ fence: '0' });
  });

  it("a certificate whose CN is a credentials identity authenticates without a token, in that identity's role", async () => {
    const resource = fresh('mutual');
    const coordinator = connect(mutualSink, undefined, { ca: ca.cert, ...ca.issueClient('coordinator') });
    const alice = connect(mutualSink, undefined, { ca: ca.cert, ...ca.issueClient('alice') });
    expect(await coordinator.advance({ resource, token: '1', grant_id: 'g1' })).toEqual({ fence: '1' });
    const written = await alice.write({ resource, token: '1', result_id: 'r', payload: Buffer.from('x') });
    expect(written).toEqual({ outcome: 'APPLIED', fence: '1' });
    // The role is the file's, not the certificate's: alice is a worker (A4).
    const denied = await failureOf(alice.advance({ resource, token: '2', grant_id: 'g2' }));
    expect(denied.code).toBe(CODE.PERMISSION_DENIED);
  });

  it('a certificate whose CN is not in the credentials file is UNAUTHENTICATED; a bearer token wins over it', async () => {
    const mallory = ca.issueClient('mallory');
    const anonymous = connect(mutualSink, undefined, { ca: ca.cert, ...mallory });
    expect((await failureOf(anonymous.getFence('any'))).code).toBe(CODE.UNAUTHENTICATED);
    const withToken = connect(mutualSink, TOKENS.alice, { ca: ca.cert, ...mallory });
    expect(await withToken.getFence('any')).toEqual({ fence: '0' });
  });
});

describe('bad TLS flags', () => {
  it.each([
    ['a cert without a key', (cert: string) => ['--tls-cert', cert], 'error: --tls-cert and --tls-key go together'],
    [
      'a missing cert file',
      () => ['--tls-cert', '/nonexistent.pem', '--tls-key', '/nonexistent.key'],
      'error: cannot read --tls-cert /nonexistent.pem: ENOENT',
    ],
  ])('%s: one line on stderr and exit 1', async (_name, flags, message) => {
    const server = ca.issueServer();
    const result = await runFencer([
      'sink',
      '--insecure',
      '--data',
      join(dir.path, fresh('bad')),
      ...flags(server.cert),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(message);
  });

  it('the flags are read from FENCER_SINK_TLS_* as well', async () => {
    const result = await runFencer(['sink', '--insecure', '--data', join(dir.path, fresh('env'))], {
      env: { FENCER_SINK_TLS_CA: ca.cert },
    });
    expect([result.code, result.stderr.trim()]).toEqual([
      1,
      'error: --tls-ca needs --tls-cert and --tls-key: client certificates are asked for only over TLS',
    ]);
  });
});

describe('V4: a TLS handshake is bounded', () => {
  it('closes sockets that never finish the handshake (silent, half a ClientHello) after keepalive-ms + timeout', async () => {
    const server = ca.issueServer();
    const sink = await startFencer([
      'sink',
      ...['--insecure', '--listen', '127.0.0.1:0', '--data', join(dir.path, fresh('handshake'))],
      ...['--tls-cert', server.cert, '--tls-key', server.key],
      ...['--keepalive-ms', '200', '--keepalive-timeout-ms', '200'],
    ]);
    try {
      const [host, port] = [sink.address.split(':')[0]!, Number(sink.address.split(':')[1])];
      const closedByServer = (socket: net.Socket) =>
        new Promise<void>((resolve) => {
          socket.on('error', () => undefined);
          socket.resume(); // read, so the server's FIN is seen
          socket.once('close', () => resolve());
        });
      const silent = net.connect(port, host);
      // A TLS record header announcing 512 bytes of handshake, and only 5 of them.
      const half = net.connect(port, host, () => half.write(Buffer.from([22, 3, 1, 2, 0, 1, 0, 1, 252, 3])));
      // Node's default would hold both for 120 s, past this test's timeout.
      await Promise.all([closedByServer(silent), closedByServer(half)]);
      // And the server says so: one line for the host, not one per socket.
      const notices = await loggedLines(sink, 'made no call');
      expect(notices.map((entry) => [entry.level, entry.host])).toEqual([[30, '127.0.0.1']]);
    } finally {
      await stopFencer(sink);
    }
  });
});
