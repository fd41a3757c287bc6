// The coordinator over TLS at both hops, as real processes: it reaches a TLS
// sink with --sink-tls-ca (and a sink that requires client certificates with
// --sink-tls-cert/--sink-tls-key, its certificate standing in for its token,
// A2), and serves TLS and mutual TLS to its own callers.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  createTestCa,
  ok,
  readClientTls,
  refused,
  runFencer,
  sinkApi,
  sinkClient,
  startSecuredCoordinator,
  startSecuredSink,
  stopFencer,
  tempDir,
  type FencerProcess,
  type SinkTls,
  type TestCa,
} from '@fencer/testkit';
import { fresh, writeCredentials } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let ca: TestCa;
let creds: ReturnType<typeof writeCredentials>;
let server: { cert: string; key: string };
let tlsSink: FencerProcess;
let mutualSink: FencerProcess;
const started: FencerProcess[] = [];
const closers: (() => void)[] = [];

beforeAll(async () => {
  dir = tempDir('fencer-coordinator-tls-');
  ca = createTestCa(dir.path);
  creds = writeCredentials(dir.path);
  server = ca.issueServer();
  [tlsSink, mutualSink] = await Promise.all([
    startSecuredSink(creds, join(dir.path, 'tls-sink'), { tls: server }),
    startSecuredSink(creds, join(dir.path, 'mutual-sink'), { tls: { ...server, clientCa: ca.cert } }),
  ]);
});

afterAll(async () => {
  for (const close of closers) close();
  await Promise.all([...started, tlsSink, mutualSink].flatMap((p) => (p ? [stopFencer(p)] : [])));
  dir?.remove();
});

/** A `fencer coordinator` process serving TLS (mutual with `mutual`) to its callers, reaching `sink` as `sinkTls` says. */
async function coordinator(sink: FencerProcess, options: { sinkTls?: SinkTls; mutual?: boolean } = {}) {
  const process = await startSecuredCoordinator(creds, join(dir.path, fresh('coordinator')), sink.address, {
    tls: { ...server, ...(options.mutual ? { clientCa: ca.cert } : {}) },
    ...(options.sinkTls ? { sinkTls: options.sinkTls } : {}),
    args: ['--sink-deadline-ms', '5000'],
  });
  started.push(process);
  return process;
}

/** Coordinator and sink calls over TLS trusting the test CA, as `token` or as the certificate `tls` holds. */
function clients(
  coordinatorAddress: string,
  sink: FencerProcess,
  token?: string,
  tls = readClientTls({ ca: ca.cert }),
) {
  const coordinatorGrpc = coordinatorClient(coordinatorAddress, {}, tls);
  const sinkGrpc = sinkClient(sink.address, {}, tls);
  closers.push(
    () => coordinatorGrpc.close(),
    () => sinkGrpc.close(),
  );
  return { coordinator: coordinatorApi(coordinatorGrpc, token), sink: sinkApi(sinkGrpc, token) };
}

const acquire = (resource: string, owner = 'alice') => ({
  request_id: fresh('req'),
  resource,
  owner_id: owner,
  incarnation: '1',
  ttl_ms: '60000',
});

describe('the coordinator and a TLS sink', () => {
  it('with --sink-tls-ca and its bearer token it grants leases end to end, over TLS to its callers too', async () => {
    const started = await coordinator(tlsSink, { sinkTls: { ca: ca.cert } });
    const alice = clients(started.address, tlsSink, creds.tokens.alice);
    const resource = fresh('tls-grant');
    const { lease } = ok(await alice.coordinator.acquire(acquire(resource)));
    expect(lease?.token).toBe('1');
    expect(await alice.sink.fence(resource)).toBe('1');
    expect(ok(await alice.sink.write(resource, '1', 'result', 'done')).outcome).toBe('APPLIED');
  });

  it('without --sink-tls-ca it cannot reach the TLS sink: SINK_UNAVAILABLE, and nothing is granted', async () => {
    const started = await coordinator(tlsSink);
    const alice = clients(started.address, tlsSink, creds.tokens.alice);
    const resource = fresh('plaintext-to-tls');
    const failure = refused(await alice.coordinator.acquire(acquire(resource)));
    expect([failure.code, failure.reason, failure.metadata.sink_code]).toEqual([
      CODE.UNAVAILABLE,
      'SINK_UNAVAILABLE',
      'UNAVAILABLE',
    ]);
    expect(await alice.sink.fence(resource)).toBe('0');
  });

  it('a sink requiring client certificates takes --sink-tls-cert in place of a token; callers use theirs too', async () => {
    const started = await coordinator(mutualSink, {
      sinkTls: { ca: ca.cert, client: ca.issueClient('coordinator') },
      mutual: true,
    });
    const alice = clients(
      started.address,
      mutualSink,
      undefined,
      readClientTls({ ca: ca.cert, ...ca.issueClient('alice') }),
    );
    const resource = fresh('mutual-grant');
    const { lease } = ok(await alice.coordinator.acquire(acquire(resource)));
    expect(lease?.token).toBe('1');
    expect(await alice.sink.fence(resource)).toBe('1');
    // A3 holds for a certificate's identity as for a token's.
    expect(refused(await alice.coordinator.acquire(acquire(fresh('other'), 'bob'))).reason).toBe('OWNER_MISMATCH');
  });

  it('--sink-tls-key without --sink-tls-cert is a one-line error and exit 1', async () => {
    const result = await runFencer(['coordinator', '--insecure', '--sink-tls-key', server.key]);
    expect([result.code, result.stdout, result.stderr.trim()]).toEqual([
      1,
      '',
      'error: --sink-tls-cert and --sink-tls-key go together: give both or neither',
    ]);
  });
});
