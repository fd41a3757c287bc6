// Shared by the coordinator's integration tests: real sink processes, an
// in-process coordinator on a FakeClock, a credentials file, fresh names.
import { join } from 'node:path';
import type { SinkClient } from '@fencer/proto';
import { FakeClock } from '@fencer/common';
import { afterAll, beforeAll } from 'vitest';
import {
  sinkApi,
  sinkClient,
  startFencer,
  stopFencer,
  tempDir,
  writeTestCredentials,
  type FencerProcess,
} from '@fencer/testkit';
import { coordinatorConfig, startCoordinator, type RunningCoordinator } from '../src/index.js';

/** A real `fencer sink` child on a port-0 address (or `listen`) over `dataDir`. */
export function startSinkProcess(
  dataDir: string,
  options: { listen?: string; credentials?: string } = {},
): Promise<FencerProcess> {
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
    write: (resource: string, fenceToken: string, resultId: string, payload: string) =>
      started(api).write(resource, fenceToken, resultId, payload),
  };
}

/** A credentials file in `dir` with a coordinator, two workers and an admin (`ops`), and their token files. */
export function writeCredentials(dir: string) {
  return writeTestCredentials(
    dir,
    {
      coordinator: 'coordinator-token-0123456789',
      alice: 'alice-worker-token-0123456789',
      bob: 'bob-worker-token-0123456789',
      ops: 'admin-token-0123456789abcdef',
    },
    { ops: 'admin' },
  );
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
  const coordinator = await startCoordinator(config, {
    clock,
    fenceSweepIntervalMs: 10,
    ...(options.newGrantId ? { newGrantId: options.newGrantId } : {}),
  });
  return { coordinator, clock, dataDir, remove: () => dir?.remove() };
}

let unique = 0;
/** A name no other test in this process uses (resources, request ids). */
export function fresh(prefix: string): string {
  return `${prefix}-${process.pid}-${++unique}-${Math.random().toString(36).slice(2, 8)}`;
}
