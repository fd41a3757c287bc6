// An independent implementation held to the conformance kit: a Sink written
// in Python from PROTOCOL.md and the .proto files alone
// (interop/python/fencing_sink.py, in memory, no code of ours), two of them
// sharded behind a real `fencer coordinator` with credentials, and
// `fencer conformance` run against the lot. The kit's checks pass through
// the Python sinks for every fence and write, so each rule it names held
// means two implementations agree on it; the rules the kit does not check
// yet (F4, A5, the sink's own V1, A4) are checked here directly.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  failureOf,
  ok,
  runFencer,
  sinkCalls,
  startFencer,
  stopFencer,
  tempDir,
  writeTestCredentials,
  type FencerProcess,
} from '@fencer/testkit';

const SINK = fileURLToPath(new URL('../python/fencing_sink.py', import.meta.url));
// Debian's interpreter: python3-grpcio lives there, not in a pyenv shim.
const PYTHON = '/usr/bin/python3';

interface KitResult {
  rule: string;
  status: 'held' | 'failed' | 'skipped';
  detail: string;
}

describe('an independent Sink in Python, held to fencer conformance', () => {
  const dir = tempDir('fencer-python-sink-');
  // The format of PROTOCOL.md: the coordinator's identity (A1), two workers
  // for the kit, and an admin.
  const tokens = Object.fromEntries(
    ['coordinator', 'worker-a', 'worker-b', 'admin'].map((identity) => [
      identity,
      randomBytes(24).toString('base64url'),
    ]),
  );
  const credentials = writeTestCredentials(dir.path, tokens);
  const started: FencerProcess[] = [];
  let sinks: string[];
  let coordinator: string;

  beforeAll(async () => {
    sinks = [];
    for (let i = 0; i < 2; i++) {
      const sink = await startFencer(['--listen', '127.0.0.1:0', '--credentials', credentials.file], {
        bin: SINK,
        interpreter: PYTHON,
      });
      started.push(sink);
      sinks.push(sink.address);
    }
    const fencer = await startFencer([
      'coordinator',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dir.path, 'coordinator'),
      '--sink',
      `py-a=${sinks[0]}`,
      '--sink',
      `py-b=${sinks[1]}`,
      '--sink-token-file',
      credentials.tokenFile('coordinator'),
      '--credentials',
      credentials.file,
    ]);
    started.push(fencer);
    coordinator = fencer.address;
  });

  afterAll(async () => {
    await Promise.all(started.map((child) => stopFencer(child)));
    dir.remove();
  });

  it('holds every rule the kit checks, the sink-side ones through the Python sinks', async () => {
    const run = await runFencer(
      [
        'conformance',
        '--coordinator',
        coordinator,
        '--sink',
        sinks.join(','),
        '--credentials',
        credentials.file,
        '--json',
      ],
      { timeoutMs: 60_000 },
    );
    expect(run.stderr).toBe('');
    const results = JSON.parse(run.stdout) as KitResult[];
    const status = Object.fromEntries(results.map((result) => [result.rule, result.status]));
    // By rule id, not the whole list, so that a new check changes nothing
    // here unless it finds a real failure (then the next line names it).
    expect(results.filter((result) => result.status === 'failed')).toEqual([]);
    expect(status).toMatchObject({
      L3: 'held', // the coordinator's AdvanceFence reached the Python sink before the grant, unary: it has no AdvanceFenceStream
      F1: 'held',
      F3: 'held',
      errors: 'held', // RESULT_NOT_FOUND from the Python sink, as ErrorInfo and trailer
      P4: 'held', // the Python sink that does not own a resource refuses its writes
      V1: 'held', // checked at the coordinator (an Acquire)
      V2: 'held', // the sink's own INVALID_FIELD for an empty result_id
      F4: 'held', // AdvanceFence as the coordinator identity, straight to the Python sink
      A5: 'held',
      T1: 'held', // the Python sink's fence at 2^64−1, and the coordinator refuses to wrap
      V3: 'held', // the Python sink walks the bytes itself: Python's protobuf parser alone is lenient
      health: 'skipped', // the Python sink serves no grpc.health.v1.Health: optional, so not a failure
    });
    expect(run.code).toBe(0);
  });

  it('keeps F4, A5, V1 and A4 at the sink, asked directly as well', async () => {
    const as = (identity: string) => sinkCalls(sinks[0]!, tokens[identity]);
    const [coord, a, b] = [as('coordinator'), as('worker-a'), as('worker-b')];
    const resource = `python-sink-${randomBytes(4).toString('hex')}`;
    const advance = (token: string, grantId: string) =>
      coord.advance({ resource, token, grant_id: grantId, owner_id: 'worker-a' });
    const write = (calls: typeof a, token: string, resourceId = resource) =>
      calls.write({ resource: resourceId, token, result_id: 'step-1', payload: Buffer.from('one') });
    try {
      // F4: the fence moves up; the same grant's retry is answered again; anything else regresses.
      expect((await advance('5', 'grant-5')).fence).toBe('5');
      expect((await advance('5', 'grant-5')).fence).toBe('5');
      for (const [token, grantId] of [
        ['5', 'another-grant'],
        ['4', 'grant-4'],
      ] as const) {
        expect(await failureOf(advance(token, grantId))).toMatchObject({
          code: CODE.FAILED_PRECONDITION,
          reason: 'FENCE_REGRESSION',
          metadata: { fence: '5' },
        });
      }
      // A5: the fence is bound to worker-a; worker-b knowing the token is not enough.
      expect(await failureOf(write(b, '5'))).toMatchObject({
        code: CODE.PERMISSION_DENIED,
        reason: 'OWNER_MISMATCH',
      });
      expect((await write(a, '5')).outcome).toBe('APPLIED');
      // V1 at the sink: the field named in a google.rpc.BadRequest.
      const invalid = await failureOf(write(a, '5', ''));
      expect(invalid).toMatchObject({ code: CODE.INVALID_ARGUMENT, reason: 'INVALID_FIELD' });
      expect(invalid.fieldViolations.map((violation) => violation.field)).toEqual(['resource']);
      // A1, A2, A4: only the coordinator advances fences; no token is no caller.
      expect((await failureOf(a.advance({ resource, token: '9', grant_id: 'g', owner_id: '' }))).code).toBe(
        CODE.PERMISSION_DENIED,
      );
      const anonymous = sinkCalls(sinks[0]!);
      expect((await failureOf(anonymous.getFence(resource))).code).toBe(CODE.UNAUTHENTICATED);
      anonymous.close();
      expect((await a.getFence(resource)).fence).toBe('5');
    } finally {
      for (const calls of [coord, a, b]) calls.close();
    }
  });

  it('lets the coordinator grant above a fence set elsewhere, refused FENCE_REGRESSION first (L3, L6)', async () => {
    // Another grant (a second coordinator, a lost data dir) set the fence to
    // 1000 at both sinks. The owning Python sink refuses the coordinator's
    // token 1 (F4), and the coordinator must resume above its fence (L6): a
    // sink that let the fence fall back to 1 fails this.
    const resource = `python-sink-${randomBytes(4).toString('hex')}`;
    const calls = sinks.map((address) => sinkCalls(address, tokens.coordinator));
    const client = coordinatorClient(coordinator);
    try {
      for (const sink of calls) await sink.advance({ resource, token: '1000', grant_id: 'elsewhere', owner_id: '' });
      const lease = ok(
        await coordinatorApi(client, tokens['worker-a']).acquire({
          request_id: `${resource}-request`,
          resource,
          owner_id: 'worker-a',
          incarnation: '1',
          ttl_ms: '30000',
        }),
      ).lease!;
      expect(BigInt(lease.token)).toBeGreaterThan(1000n);
      const fences = await Promise.all(calls.map(async (sink) => (await sink.getFence(resource)).fence));
      expect(fences).toContain(lease.token);
    } finally {
      for (const sink of calls) sink.close();
      client.close();
    }
  });
});
