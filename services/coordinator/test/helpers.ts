// Shared by the coordinator's integration tests: real sink processes, an
// in-process coordinator on a FakeClock, and typed gRPC calls that resolve
// to either a response or the decoded failure (code + reason + details).
import * as grpc from '@grpc/grpc-js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bearer,
  fencing,
  remoteFailure,
  unaryCall,
  type AcquireResponse__Output,
  type CoordinatorClient,
  type DescribeResponse__Output,
  type GetFenceResponse__Output,
  type ReleaseResponse__Output,
  type RemoteFailure,
  type RenewResponse__Output,
  type SinkClient,
  type WriteResponse__Output,
} from '@fencer/proto';
import { FakeClock } from '@fencer/common';
import { afterAll, beforeAll } from 'vitest';
import { startFencer, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';
import { coordinatorConfig, startCoordinator, type RunningCoordinator } from '../src/index.js';

export type Result<T> = { ok: true; value: T } | { ok: false; failure: RemoteFailure };

/** Calls a unary method; never throws for a gRPC error. */
export async function call<Req, Res>(
  client: grpc.Client,
  method: (req: Req, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: Res) => void) => grpc.ClientUnaryCall,
  request: Req,
  token?: string,
): Promise<Result<Res>> {
  try {
    return { ok: true, value: await unaryCall(client, method, request, { timeoutMs: 10_000, ...(token ? { metadata: bearer(token) } : {}) }) };
  } catch (error) {
    return { ok: false, failure: remoteFailure(error as grpc.ServiceError) };
  }
}

/** The value of an ok result; fails the test with the failure otherwise. */
export function ok<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected OK, got ${grpc.status[result.failure.code]} ${result.failure.reason}: ${result.failure.message}`);
  return result.value;
}

/** The failure of a refused call; fails the test if it succeeded. */
export function refused<T>(result: Result<T>): RemoteFailure {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.value)}`);
  return result.failure;
}

export const CODE = grpc.status;

export function coordinatorClient(address: string, options: grpc.ClientOptions = {}): CoordinatorClient {
  return new fencing.Coordinator(address, grpc.credentials.createInsecure(), options);
}

export function sinkClient(address: string): SinkClient {
  return new fencing.Sink(address, grpc.credentials.createInsecure());
}

/** Typed shorthands for every RPC used in the tests. */
export function coordinatorApi(client: CoordinatorClient, token?: string) {
  return {
    acquire: (r: { request_id: string; resource: string; owner_id: string; incarnation: string; ttl_ms: string }) =>
      call<typeof r, AcquireResponse__Output>(client, client.Acquire, r, token),
    renew: (r: { resource: string; owner_id: string; incarnation: string; token: string; ttl_ms: string }) =>
      call<typeof r, RenewResponse__Output>(client, client.Renew, r, token),
    release: (r: { resource: string; owner_id: string; incarnation: string; token: string }) =>
      call<typeof r, ReleaseResponse__Output>(client, client.Release, r, token),
    describe: (resource: string) => call<{ resource: string }, DescribeResponse__Output>(client, client.Describe, { resource }, token),
  };
}

export function sinkApi(client: SinkClient, token?: string) {
  return {
    write: (resource: string, fenceToken: string, resultId: string, payload: string) =>
      call<object, WriteResponse__Output>(client, client.Write, { resource, token: fenceToken, result_id: resultId, payload: Buffer.from(payload) }, token),
    fence: async (resource: string) => ok(await call<object, GetFenceResponse__Output>(client, client.GetFence, { resource }, token)).fence,
  };
}

/** A real `fencer sink` child on a port-0 address (or `listen`) over `dataDir`. */
export function startSinkProcess(dataDir: string, options: { listen?: string; credentials?: string } = {}): Promise<FencerProcess> {
  const auth = options.credentials ? ['--credentials', options.credentials] : ['--insecure'];
  return startFencer(['sink', ...auth, '--listen', options.listen ?? '127.0.0.1:0', '--data', dataDir]);
}

/**
 * One real `fencer sink` child (--insecure) for the calling test file: started
 * before its tests, stopped after them. The fields are readable once tests run.
 */
export function useSinkProcess() {
  let dir: ReturnType<typeof tempDir> | undefined;
  let child: FencerProcess | undefined;
  let api: ReturnType<typeof sinkApi> | undefined;
  let client: SinkClient | undefined;
  beforeAll(async () => {
    dir = tempDir();
    child = await startSinkProcess(dir.path);
    client = sinkClient(child.address);
    api = sinkApi(client);
  });
  afterAll(async () => {
    client?.close();
    if (child) await stopFencer(child);
    dir?.remove();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the sink process is started in beforeAll; use it inside tests');
    return value;
  };
  return {
    get process(): FencerProcess {
      return started(child);
    },
    get address(): string {
      return started(child).address;
    },
    fence: (resource: string) => started(api).fence(resource),
    write: (resource: string, fenceToken: string, resultId: string, payload: string) => started(api).write(resource, fenceToken, resultId, payload),
  };
}

/** A credentials file in `dir` with a coordinator, two workers and an admin. */
export function writeCredentials(dir: string) {
  const tokens = {
    coordinator: 'coordinator-token-0123456789',
    alice: 'alice-worker-token-0123456789',
    bob: 'bob-worker-token-0123456789',
    admin: 'admin-token-0123456789abcdef',
  };
  const path = join(dir, 'credentials.json');
  writeFileSync(
    path,
    JSON.stringify([
      { token: tokens.coordinator, identity: 'coordinator', role: 'coordinator' },
      { token: tokens.alice, identity: 'alice', role: 'worker' },
      { token: tokens.bob, identity: 'bob', role: 'worker' },
      { token: tokens.admin, identity: 'ops', role: 'admin' },
    ]),
  );
  return { path, tokens };
}

/** An in-process coordinator on a FakeClock, talking to `sink` over real gRPC. */
export async function startTestCoordinator(
  sink: string,
  options: {
    fenceOnExpiry?: boolean;
    credentials?: string;
    sinkTokenFile?: string;
    dataDir?: string;
    clock?: FakeClock;
    sinkDeadlineMs?: number;
    metrics?: string;
    /** Called for each AdvanceFence just before it is sent (the grant id generator). */
    newGrantId?: () => string;
  } = {},
): Promise<{ coordinator: RunningCoordinator; clock: FakeClock; dataDir: string; remove(): void }> {
  const dir = options.dataDir ? null : tempDir('fencer-coordinator-');
  const dataDir = options.dataDir ?? join(dir!.path, 'data');
  const config = coordinatorConfig({
    listen: '127.0.0.1:0',
    data: dataDir,
    sink,
    ...(options.sinkTokenFile ? { sinkTokenFile: options.sinkTokenFile } : {}),
    ...(options.credentials ? { credentials: options.credentials } : { insecure: true }),
    fenceOnExpiry: options.fenceOnExpiry ?? false,
    requestRetentionMs: 3_600_000,
    sinkDeadlineMs: options.sinkDeadlineMs ?? 2_000,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const clock = options.clock ?? new FakeClock();
  const coordinator = await startCoordinator(config, { clock, fenceSweepIntervalMs: 10, ...(options.newGrantId ? { newGrantId: options.newGrantId } : {}) });
  return { coordinator, clock, dataDir, remove: () => dir?.remove() };
}

let unique = 0;
/** A name no other test in this process uses (resources, request ids). */
export function fresh(prefix: string): string {
  return `${prefix}-${process.pid}-${++unique}-${Math.random().toString(36).slice(2, 8)}`;
}
