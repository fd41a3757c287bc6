// V4 against a real `fencer coordinator` process: with --max-idle-resources 0
// a resource's entry leaves memory as soon as its lease ends, and every
// answer about it (tokens, Describe, Release, Renew, R1 replays) is still
// the one the rules give, read back from LevelDB. The resident-entry gauge
// on /metrics shows the entry leave.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  coordinatorApi,
  coordinatorClient,
  eventually,
  logEntries,
  ok,
  refused,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';
import { fresh, useSinkProcess } from './helpers.js';

const sink = useSinkProcess();
let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.remove());

const TTL = 60_000; // nothing here waits on time: every lease ends by Release

async function residentEntries(metricsAddress: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://${metricsAddress}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const [, state, value] of text.matchAll(/^fencer_coordinator_resource_entries\{state="(\w+)"\} (\d+)$/gm))
    counts[state!] = Number(value);
  return counts;
}

describe('fencer coordinator --max-idle-resources 0', () => {
  it('V4/L5/L6/R1/L4: answers an evicted resource as a resident one, across acquire/release/acquire and a restart', async () => {
    const dataDir = join(dir.path, fresh('coordinator'));
    const start = () =>
      startFencer([
        'coordinator',
        '--insecure',
        '--listen',
        '127.0.0.1:0',
        '--data',
        dataDir,
        '--sink',
        sink.address,
        '--max-idle-resources',
        '0',
        '--metrics',
        '127.0.0.1:0',
      ]);
    let coordinator: FencerProcess = await start();
    let client = coordinatorClient(coordinator.address);
    try {
      const api = coordinatorApi(client);
      const metrics = await eventually(
        () => logEntries(coordinator.stderr()).find((e) => e.msg === 'coordinator ready')?.metrics as string,
        { what: 'the ready log line with the metrics address' },
      );
      const resource = fresh('evicted');
      const request = { request_id: fresh('q'), resource, owner_id: 'alice', incarnation: '1', ttl_ms: String(TTL) };
      const alice = ok(await api.acquire(request)).lease!;
      const aliceHolds = { resource, owner_id: 'alice', incarnation: '1', token: alice.token };
      expect(await residentEntries(metrics)).toEqual({ active: 1, idle: 0 });
      expect(ok(await api.release(aliceHolds)).released).toBe(true);
      expect(await residentEntries(metrics)).toEqual({ active: 0, idle: 0 }); // the entry left memory

      // Read back from the store: the next token is above the reserved block's ceiling (L6).
      const evicted = ok(await api.describe(resource));
      expect([evicted.lease, evicted.last_token]).toEqual([null, alice.token]);
      expect(BigInt(evicted.next_token)).toBeGreaterThan(BigInt(alice.token));
      expect(ok(await api.release(aliceHolds)).released).toBe(true); // L5: already released is still released
      expect(refused(await api.renew({ ...aliceHolds, ttl_ms: '0' })).reason).toBe('LEASE_EXPIRED');
      expect(ok(await api.acquire(request))).toEqual({ replayed: true, lease: { ...alice, remaining_ms: '0' } });

      const bob = ok(await api.acquire({ ...request, request_id: fresh('q'), owner_id: 'bob' })).lease!;
      expect(bob.token).toBe(evicted.next_token); // L6, from the counter read back
      expect(await sink.fence(resource)).toBe(bob.token);
      expect(refused(await api.renew({ ...aliceHolds, ttl_ms: '0' })).reason).toBe('NOT_LEASE_HOLDER');
      expect(ok(await api.release({ ...aliceHolds, owner_id: 'bob', token: bob.token })).released).toBe(true);

      client.close();
      await stopFencer(coordinator);
      coordinator = await start();
      client = coordinatorClient(coordinator.address);
      const restarted = coordinatorApi(client);
      const afterRestart = ok(await restarted.describe(resource));
      expect([afterRestart.lease, afterRestart.last_token]).toEqual([null, bob.token]);
      expect(BigInt(afterRestart.next_token)).toBeGreaterThan(BigInt(bob.token));
      const carol = ok(await restarted.acquire({ ...request, request_id: fresh('q'), owner_id: 'carol' })).lease!;
      expect(carol.token).toBe(afterRestart.next_token);
    } finally {
      client.close();
      await stopFencer(coordinator);
    }
  });
});
