// `fencer worker` against sinks sharded by resource (P3, P4): one
// coordinator, two real sinks, and a worker given both sinks by addresses
// the coordinator does not use (localhost, where the coordinator dials
// 127.0.0.1), as a worker behind a proxy would be. With no map of which
// sink owns what, its writes still land on the sink the grant names, and
// the other sink holds nothing of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type WorkerProcess } from '@fencer/supervisor';
import { ok, sinkApi, sinkClient, startFencer, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';

let dir: ReturnType<typeof tempDir>;
const children: FencerProcess[] = [];
const workers: WorkerProcess[] = [];
let sinks: { a: FencerProcess; b: FencerProcess };
let coordinator: FencerProcess;

beforeAll(async () => {
  dir = tempDir();
  const sink = (name: string) =>
    startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', `${dir.path}/sink-${name}`]);
  const [a, b] = await Promise.all([sink('a'), sink('b')]);
  sinks = { a, b };
  children.push(sinks.a, sinks.b);
  coordinator = await startFencer([
    'coordinator',
    '--insecure',
    '--listen',
    '127.0.0.1:0',
    '--data',
    `${dir.path}/coordinator`,
    '--sink',
    `a=${sinks.a.address}`,
    '--sink',
    `b=${sinks.b.address}`,
  ]);
  children.push(coordinator);
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await Promise.all(children.map((child) => stopFencer(child, 1_000)));
  dir.remove();
});

/** The same sink, by a name the coordinator does not use for it. */
const elsewhere = (address: string) => address.replace('127.0.0.1', 'localhost');

describe('fencer worker, sinks sharded by resource', () => {
  it('writes each resource to the sink its grant names, found without a map (P3); the other sink has nothing (P4)', async () => {
    const seen = new Set<string>();
    // Resources until each sink owned one: each does with probability 1/2 per resource.
    for (let i = 0; seen.size < 2 && i < 20; i++) {
      const resource = `sharded-${i}`;
      const worker = await startWorker({
        coordinator: coordinator.address,
        sink: `${elsewhere(sinks.a.address)},${elsewhere(sinks.b.address)}`,
        owner: 'worker-a',
        args: ['--commands', '--resource', resource, '--ttl-ms', '60000'],
      });
      workers.push(worker);
      worker.send('acquire');
      const acquired = await worker.next('acquired');
      const owner = acquired.sink as 'a' | 'b';
      expect(['a', 'b']).toContain(owner);
      seen.add(owner);
      worker.send('write step-1 computed');
      expect((await worker.next('written')).outcome).toBe('applied');
      worker.send('read step-1');
      expect((await worker.next('read')).payload).toBe('computed');

      const other = owner === 'a' ? 'b' : 'a';
      const [ownerClient, otherClient] = [sinkClient(sinks[owner].address), sinkClient(sinks[other].address)];
      try {
        expect(await sinkApi(ownerClient).fence(resource)).toBe(acquired.token);
        expect(await sinkApi(otherClient).fence(resource)).toBe('0');
        // The other sink refuses that token outright (TOKEN_NOT_ISSUED): a write there could never land.
        const stray = await sinkApi(otherClient).write(resource, acquired.token, 'step-1', 'computed');
        expect(stray.ok ? 'APPLIED' : stray.failure.reason).toBe('TOKEN_NOT_ISSUED');
        expect(ok(await sinkApi(ownerClient).write(resource, acquired.token, 'step-1', 'computed')).outcome).toBe(
          'REPLAYED',
        );
      } finally {
        ownerClient.close();
        otherClient.close();
      }
      worker.send('exit');
      expect((await worker.exited).code).toBe(0);
    }
    expect([...seen].sort()).toEqual(['a', 'b']);
  });
});
