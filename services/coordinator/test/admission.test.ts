// What a request costs the coordinator before it is trusted, over real gRPC:
// an unauthenticated caller's request is never read, inflated or decoded
// (A6); an authenticated one is inflated only up to gRPC's bound (V2) and
// decoded strictly (V3).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencing } from '@fencer/proto';
import { registry } from '@fencer/server-kit';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  gzipBomb,
  ok,
  rawUnaryCall,
  refused,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';
import { fresh, startSinkProcess, startTestCoordinator, writeCredentials } from './helpers.js';

const MiB = 1024 * 1024;
const ACQUIRE = '/fencing.v1.Coordinator/Acquire';

let dir: ReturnType<typeof tempDir>;
let creds: ReturnType<typeof writeCredentials>;
let sinkProcess: FencerProcess;
let started: Awaited<ReturnType<typeof startTestCoordinator>>;
let api: ReturnType<typeof coordinatorApi>;
let client: ReturnType<typeof coordinatorClient>;

beforeAll(async () => {
  dir = tempDir();
  creds = writeCredentials(dir.path);
  sinkProcess = await startSinkProcess(dir.path);
  started = await startTestCoordinator(sinkProcess.address, { credentials: creds.file });
  client = coordinatorClient(started.coordinator.address);
  api = coordinatorApi(client, creds.tokens.alice);
});

afterAll(async () => {
  client?.close();
  await started?.coordinator.stop();
  started?.remove();
  if (sinkProcess) await stopFencer(sinkProcess);
  dir?.remove();
});

/** How many Acquire requests this process's servers have read, inflated and decoded. */
async function acquiresRead(): Promise<number> {
  const { values } = await registry.getSingleMetric('fencer_rpc_requests_read_total')!.get();
  return values.find((v) => v.labels.service === 'coordinator' && v.labels.method === 'Acquire')?.value ?? 0;
}

/** An Acquire of `resource` whose request_id inflates to about `inflatedBytes` of NULs. */
const acquireBomb = (resource: string, inflatedBytes: number) =>
  gzipBomb(
    fencing.Coordinator.service.Acquire.requestSerialize({
      resource,
      owner_id: 'alice',
      incarnation: '1',
      ttl_ms: '60000',
    }),
    1, // request_id
    inflatedBytes,
  );

describe('A6 and V2 at the coordinator', () => {
  it.each([
    ['1.5 MiB (under the bound)', 1.5 * MiB],
    ['60 MiB', 60 * MiB],
  ])('an unauthenticated gzip bomb Acquire of %s is UNAUTHENTICATED and never inflated', async (_what, size) => {
    const resource = fresh('bomb');
    const before = await acquiresRead();
    const failure = refused(await rawUnaryCall(started.coordinator.address, ACQUIRE, acquireBomb(resource, size)));
    expect([failure.code, failure.reason]).toEqual([CODE.UNAUTHENTICATED, 'UNAUTHENTICATED']);
    expect(await acquiresRead()).toBe(before);
    expect(ok(await api.describe(resource)).lease).toBeNull();
  });

  it('from a known caller, a 1.5 MiB bomb is read and refused naming request_id; 60 MiB is RESOURCE_EXHAUSTED unread', async () => {
    const resource = fresh('bomb');
    const authorization = { authorization: `Bearer ${creds.tokens.alice}` };
    const before = await acquiresRead();
    const small = refused(
      await rawUnaryCall(started.coordinator.address, ACQUIRE, acquireBomb(resource, 1.5 * MiB), authorization),
    );
    expect([small.code, small.reason, small.fieldViolations.map((v) => v.field)]).toEqual([
      CODE.INVALID_ARGUMENT,
      'INVALID_FIELD',
      ['request_id'],
    ]);
    expect(await acquiresRead()).toBe(before + 1);
    const big = refused(
      await rawUnaryCall(started.coordinator.address, ACQUIRE, acquireBomb(resource, 60 * MiB), authorization),
    );
    expect(big.code).toBe(CODE.RESOURCE_EXHAUSTED);
    expect(await acquiresRead()).toBe(before + 1);
    expect(ok(await api.describe(resource)).lease).toBeNull();
  });
});

describe('V3: an Acquire is decoded strictly', () => {
  const asAlice = () => ({ authorization: `Bearer ${creds.tokens.alice}` });
  const acquire = (resource: string, requestId: string) =>
    fencing.Coordinator.service.Acquire.requestSerialize({
      request_id: requestId,
      resource,
      owner_id: 'alice',
      incarnation: '1',
      ttl_ms: '60000',
    });
  // Each malformation of an Acquire of `resource`, and the field it names.
  const MALFORMED: [string, (resource: string) => Buffer, string | undefined][] = [
    [
      'a truncated last field',
      (r) => Buffer.concat([acquire(r, fresh('req')), Buffer.from([0x1a, 50]), Buffer.from('bob!')]),
      'owner_id',
    ],
    [
      'a string with the varint wire type',
      (r) => Buffer.concat([Buffer.from([0x08, 3]), Buffer.from('req'), acquire(r, '')]),
      'request_id',
    ],
    ['field number 0', (r) => Buffer.concat([Buffer.from([0x02, 1, 0x72]), acquire(r, fresh('req'))]), undefined],
    [
      'invalid UTF-8 in owner_id',
      (r) => Buffer.concat([acquire(r, fresh('req')), Buffer.from([0x1a, 2, 0xc3, 0x28])]),
      'owner_id',
    ],
  ];

  it.each(MALFORMED)('%s: INVALID_ARGUMENT, MALFORMED_MESSAGE; no lease granted', async (_what, bytes, field) => {
    const resource = fresh('v3');
    const failure = refused(
      await rawUnaryCall(started.coordinator.address, ACQUIRE, { bytes: bytes(resource) }, asAlice()),
    );
    expect([failure.code, failure.reason]).toEqual([CODE.INVALID_ARGUMENT, 'MALFORMED_MESSAGE']);
    expect(failure.metadata.fault).toBeTruthy();
    expect(failure.fieldViolations.map((v) => v.field)).toEqual(field === undefined ? [] : [field]);
    expect(ok(await api.describe(resource)).lease).toBeNull();
  });

  it('a valid Acquire with an unknown field is granted (forward compatibility)', async () => {
    const resource = fresh('v3-unknown');
    const unknownField = Buffer.from([0xa2, 0x06, 2, 0x68, 0x69]); // field 100, length-delimited "hi"
    const bytes = Buffer.concat([acquire(resource, fresh('req')), unknownField]);
    expect((await rawUnaryCall(started.coordinator.address, ACQUIRE, { bytes }, asAlice())).ok).toBe(true);
    expect(ok(await api.describe(resource)).lease?.owner_id).toBe('alice');
  });
});
