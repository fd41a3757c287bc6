// The coordinator variants against the real `fencer coordinator`, all
// wired to one real sink, process to process over gRPC: the same calls,
// the real coordinator keeping L3/R1 and each variant visibly breaking its rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  coordinatorApi,
  coordinatorClient,
  eventually,
  ok,
  refused,
  sinkCalls,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';
import { startCoordinatorProcess, startSinkProcess, stopAll } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let sink: FencerProcess;
let real: FencerProcess;
let grantFirst: FencerProcess;
let noRecords: FencerProcess;
beforeAll(async () => {
  dir = tempDir('fencer-variants-coordinator-');
  sink = await startSinkProcess(dir.path);
  [real, grantFirst, noRecords] = await Promise.all([
    startCoordinatorProcess(dir.path, sink.address),
    startCoordinatorProcess(dir.path, sink.address, 'grant-first-coordinator'),
    startCoordinatorProcess(dir.path, sink.address, 'no-request-records-coordinator'),
  ]);
});
afterAll(async () => {
  for (const channel of channels) channel.close();
  await stopAll([real, grantFirst, noRecords]);
  await stopAll([sink]);
  dir?.remove();
});

/** Channels the tests opened, closed after all of them. */
const channels: { close(): void }[] = [];
function coordinatorOf(coordinator: FencerProcess) {
  const raw = coordinatorClient(coordinator.address);
  channels.push(raw);
  return coordinatorApi(raw);
}
function theSink() {
  const calls = sinkCalls(sink.address);
  channels.push(calls);
  return calls;
}

const acquire = (requestId: string, resource: string) => ({
  request_id: requestId,
  resource,
  owner_id: 'worker-a',
  incarnation: '1',
  ttl_ms: '60000',
});

describe('grant-first-coordinator (L3 broken)', () => {
  /** Acquires a fresh `resource` and reads the sink's fence as soon as the grant is answered. */
  async function fenceWhenGranted(coordinator: FencerProcess, resource: string) {
    const api = coordinatorOf(coordinator);
    const fences = theSink();
    await fences.getFence(resource); // a connected channel, so the read follows the answer closely
    const { lease } = ok(await api.acquire(acquire(`${resource}-request`, resource)));
    return { token: lease?.token, fence: (await fences.getFence(resource)).fence };
  }

  it("answers Acquire while the sink's fence is still the old one; the real coordinator moves it first", async () => {
    expect(await fenceWhenGranted(real, 'real-job')).toEqual({ token: '1', fence: '1' });
    // The variant's AdvanceFence trails its answer by a fixed delay; a very slow read may miss it, so try a few.
    let granted: Awaited<ReturnType<typeof fenceWhenGranted>> | undefined;
    for (let attempt = 0; attempt < 5 && granted?.fence !== '0'; attempt++)
      granted = await fenceWhenGranted(grantFirst, `grant-first-job-${attempt}`);
    expect(granted).toMatchObject({ token: '1', fence: '0' });
    // The fence does move, only too late.
    const fences = theSink();
    await eventually(async () => ((await fences.getFence('grant-first-job-0')).fence === '1' ? true : undefined), {
      what: "the grant-first coordinator's late AdvanceFence",
    });
  });
});

describe('no-request-records-coordinator (R1 broken)', () => {
  /** Acquire, its retry while held, Release, then the same retry again: the tokens and codes each saw. */
  async function retriedAcquire(coordinator: FencerProcess, resource: string) {
    const api = coordinatorOf(coordinator);
    const request = acquire(`${resource}-request`, resource);
    const { lease } = ok(await api.acquire(request));
    const whileHeld = await api.acquire(request);
    ok(await api.release({ resource, owner_id: 'worker-a', incarnation: '1', token: lease!.token }));
    const afterRelease = ok(await api.acquire(request));
    return {
      first: lease!.token,
      whileHeld: whileHeld.ok ? { token: whileHeld.value.lease?.token } : { reason: refused(whileHeld).reason },
      afterRelease: { token: afterRelease.lease?.token, replayed: afterRelease.replayed },
    };
  }

  it('mints a second token for one request id (S2) where the real coordinator replays the first', async () => {
    expect(await retriedAcquire(real, 'real-task')).toEqual({
      first: '1',
      whileHeld: { token: '1' },
      afterRelease: { token: '1', replayed: true },
    });
    expect(await retriedAcquire(noRecords, 'no-records-task')).toEqual({
      first: '1',
      whileHeld: { reason: 'LEASE_HELD' },
      afterRelease: { token: '2', replayed: false },
    });
  });
});
