// Sinks sharded by resource (P1–P4) as real processes: one coordinator in
// front of two `fencer sink` children. Each grant names the sink that owns
// its resource, by the documented rendezvous weight; only that sink gets
// the fence, so a write sent to the other is refused TOKEN_NOT_ISSUED; the
// set of names is kept at first start, an address may change, a name may not.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  coordinatorApi,
  coordinatorClient,
  ok,
  refused,
  runFencer,
  sinkApi,
  sinkClient,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';
import { ownerOf } from '../src/core/shards.js';
import { fresh, startSinkProcess } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
const sinks: Record<'a' | 'b', FencerProcess> = {} as never;
const children: FencerProcess[] = [];

beforeAll(async () => {
  dir = tempDir();
  [sinks.a, sinks.b] = await Promise.all([
    startSinkProcess(join(dir.path, 'sink-a')),
    startSinkProcess(join(dir.path, 'sink-b')),
  ]);
  children.push(sinks.a, sinks.b);
});

afterAll(async () => {
  await Promise.all(children.map((child) => stopFencer(child, 1_000)));
  dir.remove();
});

const sinkFlags = (named: Record<string, string>) =>
  Object.entries(named).flatMap(([name, address]) => ['--sink', `${name}=${address}`]);

async function coordinatorOn(dataDir: string, named: Record<string, string>) {
  const child = await startFencer([
    'coordinator',
    '--insecure',
    '--listen',
    '127.0.0.1:0',
    '--data',
    dataDir,
    ...sinkFlags(named),
  ]);
  children.push(child);
  const client = coordinatorClient(child.address);
  return { child, api: coordinatorApi(client), close: () => client.close() };
}

const acquireReq = (resource: string, owner: string) => ({
  request_id: fresh('req'),
  resource,
  owner_id: owner,
  incarnation: '1',
  ttl_ms: '60000',
});

describe('P1–P4: one coordinator, two sinks', () => {
  it("each grant names its resource's sink, only that sink holds the fence, and the other refuses the write (P4)", async () => {
    const dataDir = join(dir.path, fresh('coordinator'));
    const coordinator = await coordinatorOn(dataDir, { a: sinks.a.address, b: sinks.b.address });
    const clients = { a: sinkClient(sinks.a.address), b: sinkClient(sinks.b.address) };
    const api = { a: sinkApi(clients.a), b: sinkApi(clients.b) };
    try {
      // Enough resources that both sinks own some (each owns one with probability 1/2).
      const resources = Array.from({ length: 16 }, () => fresh('job'));
      const owners = new Set<string>();
      for (const resource of resources) {
        const lease = ok(await coordinator.api.acquire(acquireReq(resource, 'alice'))).lease!;
        const owner = ownerOf(resource, ['a', 'b']) as 'a' | 'b';
        const other = owner === 'a' ? 'b' : 'a';
        owners.add(owner);
        // P3: the grant names the owner, by name and by the address the coordinator dials.
        expect(lease.sink).toEqual({ name: owner, address: sinks[owner].address });
        // P1: the owner got the fence (L3); the other never heard of the resource.
        expect(await api[owner].fence(resource)).toBe(lease.token);
        expect(await api[other].fence(resource)).toBe('0');
        // P4: the write where the grant says lands; the same write at the other sink is refused.
        expect(ok(await api[owner].write(resource, lease.token, 'r-1', 'x')).outcome).toBe('APPLIED');
        expect(refused(await api[other].write(resource, lease.token, 'r-1', 'x')).reason).toBe('TOKEN_NOT_ISSUED');
        // Describe names it too.
        expect(ok(await coordinator.api.describe(resource)).lease?.sink?.name).toBe(owner);
      }
      expect([...owners].sort()).toEqual(['a', 'b']);
      // fencer inspect given both sinks shows the owner's view (P3), also by
      // addresses the coordinator does not use for them: found by the fence (P4).
      const elsewhere = (address: string) => address.replace('127.0.0.1', 'localhost');
      for (const resource of resources.slice(0, 4)) {
        const owner = ownerOf(resource, ['a', 'b']) as 'a' | 'b';
        const inspected = await runFencer([
          'inspect',
          resource,
          '--insecure',
          '--json',
          '--coordinator',
          coordinator.child.address,
          '--sink',
          `${elsewhere(sinks.a.address)},${elsewhere(sinks.b.address)}`,
        ]);
        expect(inspected.code).toBe(0);
        const { sink } = JSON.parse(inspected.stdout) as {
          sink: { name: string; address: string; results: unknown[] };
        };
        expect([sink.name, sink.address, sink.results.length]).toEqual([owner, elsewhere(sinks[owner].address), 1]);
      }
    } finally {
      clients.a.close();
      clients.b.close();
      coordinator.close();
      await stopFencer(coordinator.child);
    }
  });

  it('P2: a restart may change an address but not the set of names, and says what changed', async () => {
    const dataDir = join(dir.path, fresh('coordinator'));
    const first = await coordinatorOn(dataDir, { a: sinks.a.address, b: sinks.b.address });
    const resource = fresh('job');
    const token = ok(await first.api.acquire(acquireReq(resource, 'alice'))).lease!.token;
    first.close();
    await stopFencer(first.child);

    // Another set of names: refused with one line naming what was added and removed; nothing served.
    const renamed = await runFencer([
      'coordinator',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      dataDir,
      ...sinkFlags({ a: sinks.a.address, c: sinks.b.address }),
    ]);
    expect(renamed.code).toBe(1);
    expect(renamed.stderr.trim().split('\n')).toEqual([
      'fencer coordinator: the sinks differ from those recorded at first start (a, b): c added, b removed; moving resources between sinks needs a fenced hand-over, which this version does not do (P2)',
    ]);

    // The same names, in another order and with b at another address (a proxy of it): allowed.
    const proxyish = join(dir.path, fresh('sink-b-again'));
    const bAgain = await startSinkProcess(proxyish);
    children.push(bAgain);
    const second = await coordinatorOn(dataDir, { b: bAgain.address, a: sinks.a.address });
    try {
      // It serves the same store: alice's lease still holds (L7).
      expect(refused(await second.api.acquire(acquireReq(resource, 'bob'))).reason).toBe('LEASE_HELD');
      const described = ok(await second.api.describe(resource)).lease!;
      expect(described.token).toBe(token);
      expect(described.sink?.address).toBe(ownerOf(resource, ['a', 'b']) === 'a' ? sinks.a.address : bAgain.address);
    } finally {
      second.close();
    }
  });
});
