// What a request costs the coordinator before it is trusted, over real gRPC:
// an unauthenticated caller's request is never read, inflated or decoded
// (A6); an authenticated one is inflated only up to gRPC's bound (V2).
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
  started = await startTestCoordinator(sinkProcess.address, { credentials: creds.path });
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
    ['3 MiB (under the bound)', 3 * MiB],
    ['60 MiB', 60 * MiB],
  ])('an unauthenticated gzip bomb Acquire of %s is UNAUTHENTICATED and never inflated', async (_what, size) => {
    const resource = fresh('bomb');
    const before = await acquiresRead();
    const failure = refused(await rawUnaryCall(started.coordinator.address, ACQUIRE, acquireBomb(resource, size)));
    expect([failure.code, failure.reason]).toEqual([CODE.UNAUTHENTICATED, 'UNAUTHENTICATED']);
    expect(await acquiresRead()).toBe(before);
    expect(ok(await api.describe(resource)).lease).toBeNull();
  });

  it('from a known caller, a 3 MiB bomb is read and refused naming request_id; 60 MiB is RESOURCE_EXHAUSTED unread', async () => {
    const resource = fresh('bomb');
    const authorization = { authorization: `Bearer ${creds.tokens.alice}` };
    const before = await acquiresRead();
    const small = refused(
      await rawUnaryCall(started.coordinator.address, ACQUIRE, acquireBomb(resource, 3 * MiB), authorization),
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
