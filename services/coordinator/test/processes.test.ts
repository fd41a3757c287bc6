// Real processes only: the coordinator and the sink as `fencer` children,
// killed with real signals, restarted on the same data directories.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  logEntries,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
  CODE,
  coordinatorApi,
  coordinatorClient,
  ok,
  refused,
  sinkApi,
  sinkCalls,
  sinkClient,
} from '@fencer/testkit';
import { UINT64_MAX } from '@fencer/common';
import { fresh, startSinkProcess } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let sink: FencerProcess;
const children: FencerProcess[] = [];

beforeAll(async () => {
  dir = tempDir();
  sink = await startSinkProcess(join(dir.path, 'sink'));
  children.push(sink);
});

afterAll(async () => {
  await Promise.all(children.map((child) => stopFencer(child, 1_000)));
  dir.remove();
});

async function startCoordinatorProcess(
  dataDir: string,
  sinkAddress: string,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
) {
  const child = await startFencer(
    ['coordinator', '--insecure', '--listen', '127.0.0.1:0', '--data', dataDir, '--sink', sinkAddress, ...extra],
    { env },
  );
  children.push(child);
  const client = coordinatorClient(child.address);
  return { child, client, api: coordinatorApi(client) };
}

async function sigkill(child: FencerProcess) {
  child.kill('SIGKILL');
  expect((await child.exited).signal).toBe('SIGKILL');
}

const acquireReq = (resource: string, owner: string, ttlMs: number, requestId = fresh('req')) => ({
  request_id: requestId,
  resource,
  owner_id: owner,
  incarnation: '1',
  ttl_ms: String(ttlMs),
});

describe('coordinator and sink as real processes', () => {
  it('L6/L7/R1: a SIGKILLed coordinator restarted on its data dir replays old grants, keeps the lease a full TTL from the restart, then grants a larger token', async () => {
    const TTL = 60_000; // long enough that no slow machine sees it run out: nothing here waits on time
    const dataDir = join(dir.path, fresh('coordinator'));
    const resource = fresh('restart');
    const first = await startCoordinatorProcess(dataDir, sink.address);
    const request = acquireReq(resource, 'alice', TTL);
    const granted = ok(await first.api.acquire(request)).lease!;
    first.client.close();
    await sigkill(first.child);

    const restartedAtMs = performance.now(); // before the new process loads its data
    const second = await startCoordinatorProcess(dataDir, sink.address);
    const replay = ok(await second.api.acquire(request));
    expect(replay.replayed).toBe(true);
    expect(replay.lease).toMatchObject({ token: granted.token, owner_id: 'alice' });
    expect(ok(await second.api.describe(resource)).last_token).toBe(granted.token);
    // L7: the downtime is unknowable, so alice's lease runs a full TTL from the restart, not from the grant.
    const held = refused(await second.api.acquire(acquireReq(resource, 'bob', TTL)));
    expect(held.reason).toBe('LEASE_HELD');
    expect(Number(held.metadata.remaining_ms)).toBeGreaterThanOrEqual(
      TTL - Math.ceil(performance.now() - restartedAtMs),
    );

    expect(
      ok(await second.api.release({ resource, owner_id: 'alice', incarnation: '1', token: granted.token })).released,
    ).toBe(true);
    const next = ok(await second.api.acquire(acquireReq(resource, 'bob', TTL))).lease!;
    expect(BigInt(next.token)).toBeGreaterThan(BigInt(granted.token));
    expect(await sinkApi(sinkClient(sink.address)).fence(resource)).toBe(next.token);
    second.client.close();
  });

  it('L6: a coordinator whose data dir was deleted resumes above the sink fence and fences the old holder out', async () => {
    const dataDir = join(dir.path, fresh('coordinator'));
    const resource = fresh('lost-data');
    const sinkSide = sinkApi(sinkClient(sink.address));
    const first = await startCoordinatorProcess(dataDir, sink.address);
    const old = ok(await first.api.acquire(acquireReq(resource, 'alice', 60_000))).lease!;
    ok(await sinkSide.write(resource, old.token, 'r1', 'x'));
    first.client.close();
    await sigkill(first.child);
    rmSync(dataDir, { recursive: true, force: true });

    const second = await startCoordinatorProcess(dataDir, sink.address);
    // It cannot know the sink's fence yet: its next token is 1 until FENCE_REGRESSION tells it (L6).
    expect(ok(await second.api.describe(resource))).toEqual({ lease: null, last_token: '0', next_token: '1' });
    const lease = ok(await second.api.acquire(acquireReq(resource, 'bob', 60_000))).lease!;
    expect(BigInt(lease.token)).toBeGreaterThan(BigInt(old.token));
    expect(await sinkSide.fence(resource)).toBe(lease.token);
    expect(refused(await sinkSide.write(resource, old.token, 'r2', 'y')).reason).toBe('STALE_TOKEN');
    second.client.close();
  });

  it('T1: with the sink fence at 2^64−1, every Acquire is RESOURCE_EXHAUSTED TOKEN_SPACE_EXHAUSTED, and nothing wraps', async () => {
    const resource = fresh('exhausted');
    const max = UINT64_MAX.toString();
    const direct = sinkCalls(sink.address); // the sink runs --insecure: anyone may advance a fence
    await direct.advance({ resource, token: max, grant_id: 'another-coordinator' });
    const coordinator = await startCoordinatorProcess(join(dir.path, fresh('coordinator')), sink.address);
    // The same answer every time: not an outage (SINK_UNAVAILABLE) nor a conflict (FENCE_CONFLICT) to retry.
    for (const owner of ['alice', 'alice', 'bob']) {
      const failure = refused(await coordinator.api.acquire(acquireReq(resource, owner, 60_000)));
      expect([failure.code, failure.reason]).toEqual([CODE.RESOURCE_EXHAUSTED, 'TOKEN_SPACE_EXHAUSTED']);
    }
    expect(await direct.getFence(resource)).toEqual({ fence: max });
    expect(ok(await coordinator.api.describe(resource))).toEqual({ lease: null, last_token: '0', next_token: '0' });
    direct.close();
    coordinator.client.close();
  });

  it('V4: past --max-records-per-owner and --max-acquires-per-second, Acquire is RESOURCE_EXHAUSTED with RECORDS_FULL / RATE_LIMITED on the wire, logged once per owner', async () => {
    const coordinator = await startCoordinatorProcess(join(dir.path, fresh('coordinator')), sink.address, [
      '--max-records-per-owner',
      '1',
      '--max-acquires-per-second',
      '3',
    ]);
    const acquire = (owner: string) => coordinator.api.acquire(acquireReq(fresh('quota'), owner, 60_000));
    // Three calls fit mallory's burst of 3, so only the record quota can refuse them.
    ok(await acquire('mallory'));
    for (let i = 0; i < 2; i++) {
      const full = refused(await acquire('mallory'));
      expect([full.code, full.reason, full.metadata]).toEqual([
        CODE.RESOURCE_EXHAUSTED,
        'RECORDS_FULL',
        { scope: 'owner', limit: '1' },
      ]);
    }
    // Twelve at once cannot all fit eve's burst of 3 (plus 3 a second).
    const answers = await Promise.all(Array.from({ length: 12 }, () => acquire('eve')));
    const limited = answers.filter((a) => !a.ok && a.failure.reason === 'RATE_LIMITED').map(refused);
    expect(limited.length).toBeGreaterThan(0);
    for (const failure of limited) {
      expect(failure.code).toBe(CODE.RESOURCE_EXHAUSTED);
      expect(Number(failure.metadata.retry_after_ms)).toBeGreaterThan(0);
    }
    ok(await acquire('alice')); // others are not affected
    const logged = logEntries(coordinator.child.stderr())
      .filter((e) => e.ownerId === 'mallory' || e.ownerId === 'eve')
      .map((e) => `${e.ownerId as string} ${e.kind as string}`);
    expect(logged.filter((line) => line === 'mallory records-full')).toHaveLength(1);
    expect(logged.filter((line) => line === 'eve rate-limited')).toHaveLength(1);
    coordinator.client.close();
  });

  it('L3/S2: the sink killed mid-Acquire → SINK_UNAVAILABLE; after the sink restarts, the same request id yields exactly one token', async () => {
    const sinkData = join(dir.path, fresh('own-sink'));
    let ownSink = await startSinkProcess(sinkData);
    children.push(ownSink);
    const address = ownSink.address;
    const coordinator = await startCoordinatorProcess(
      join(dir.path, fresh('coordinator')),
      address,
      ['--sink-deadline-ms', '20000'],
      { FENCER_LOG_LEVEL: 'debug' },
    );
    ok(await coordinator.api.acquire(acquireReq(fresh('warm-up'), 'alice', 60_000))); // the sink channel is connected

    const resource = fresh('sink-killed');
    const request = acquireReq(resource, 'alice', 60_000);
    ownSink.kill('SIGSTOP');
    const inFlight = coordinator.api.acquire(request);
    await eventually(
      () =>
        coordinator.child
          .stderr()
          .split('\n')
          .some((line) => line.includes('advancing the sink fence') && line.includes(resource))
          ? true
          : undefined,
      { what: 'the AdvanceFence to be sent' },
    );
    ownSink.kill('SIGKILL');
    const failure = refused(await inFlight);
    expect([failure.code, failure.reason, failure.metadata.sink_code]).toEqual([
      CODE.UNAVAILABLE,
      'SINK_UNAVAILABLE',
      'UNAVAILABLE',
    ]);
    await ownSink.exited;

    ownSink = await startSinkProcess(sinkData, { listen: address });
    children.push(ownSink);
    const granted = await eventually(
      async () => {
        const result = await coordinator.api.acquire(request);
        if (!result.ok) expect(result.failure.reason).toBe('SINK_UNAVAILABLE'); // only while reconnecting
        return result.ok ? result.value : undefined;
      },
      { what: 'the coordinator to reach the restarted sink' },
    );
    const again = ok(await coordinator.api.acquire(request));
    expect(again.replayed).toBe(true);
    expect(again.lease!.token).toBe(granted.lease!.token);
    expect(await sinkApi(sinkClient(address)).fence(resource)).toBe(granted.lease!.token);
    coordinator.client.close();
  });
});
