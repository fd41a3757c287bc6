// Named scenarios 7, 8 and 9: the services themselves fail under a running
// workload. A sink SIGKILLed loses no acknowledged write (F6, S5), and of
// two sinks sharded by resource stops only its own resources (P1, P3); a
// coordinator SIGKILLed, and once with its data lost, keeps tokens rising
// (L6) and still answers replays when its data survived (R3); two
// coordinators on one sink grant overlapping leases, and the fence alone
// keeps every token to one holder and no stale write accepted (S1, S3).
// Where a coordinator forgets a grant or has a rival, leases overlap by
// design (L3), so the lock model judges the token order only there.
import { describe, expect, it } from 'vitest';
import { eventually } from '@fencer/testkit';
import {
  crash,
  DEFAULT_WORKLOAD,
  loopingWorkerArgs,
  replyLoss,
  splitBrain,
  type Operation,
  type Scenario,
} from '../../src/index.js';
import { acquire, connectFirst, scenario, scripted, write } from './helpers.js';

const WORKERS = ['worker-a', 'worker-b', 'worker-c', 'worker-d'];
const looping = (resource: string) => loopingWorkerArgs(resource, { ...DEFAULT_WORKLOAD, stepMs: 50 });

const ok = (method: Operation['method']) => (op: Operation) => op.method === method && op.outcome.type === 'ok';

/** Waits until `count` more calls of `method` succeeded than had when it was called. */
async function more(s: Scenario, method: Operation['method'], count: number): Promise<void> {
  const start = s.operations.filter(ok(method)).length;
  await eventually(() => (s.operations.filter(ok(method)).length >= start + count ? true : undefined), {
    timeoutMs: 30_000,
    what: `${count} more successful ${method} calls`,
  });
}

/** The sink a grant named (Lease.sink, P3). */
function sinkOf(op: Operation): string {
  return (op.outcome as unknown as { response: { lease: { sink: { name: string } } } }).response.lease.sink.name;
}

/** Tokens granted per resource, in the order the grants were acknowledged. */
function grantsByResource(operations: readonly Operation[]): Map<string, bigint[]> {
  const byResource = new Map<string, bigint[]>();
  for (const op of [...operations].filter(ok('Acquire')).sort((a, b) => a.completedMs - b.completedMs)) {
    const lease = (op.outcome as unknown as { response: { lease: { token: string } } }).response.lease;
    const resource = String(op.request.resource);
    byResource.set(resource, [...(byResource.get(resource) ?? []), BigInt(lease.token)]);
  }
  return byResource;
}

// Many steps on real processes: a loaded machine makes each slower, never wrong.
describe('crash scenarios', { timeout: 120_000 }, () => {
  it('7. sink SIGKILL under load: no acknowledged write is lost', async () => {
    const s = await scenario('sink_crash', { workers: WORKERS });
    await Promise.all(WORKERS.map((owner, i) => s.worker(owner, looping(`job-${i % 2}`))));
    await more(s, 'Write', 8);
    const restart = await s.inject(crash(s.cluster, 'sink'));
    // Down for as long as its restart takes: the workers' calls meanwhile fail or hang.
    await restart();
    await more(s, 'Write', 8);
    const { violations, history } = await s.verdict();
    expect(violations).toEqual([]);
    // S5 was judged on writes acknowledged before the sink died, not only after.
    const [fault] = history.faults;
    expect(fault?.name).toBe('crash');
    const before = history.operations.filter((op) => ok('Write')(op) && op.completedMs < fault!.startMs);
    expect(before.length).toBeGreaterThanOrEqual(8);
  });

  it("7b. two sinks sharded by resource, one SIGKILLed: the other sink's resources keep going (P1, P3), and nothing acknowledged is lost", async () => {
    const s = await scenario('sink_shard_crash', { workers: WORKERS, sinks: 2 });
    // Rendezvous hashing puts job-1 on one sink and job-2 on the other; the grants say which.
    await Promise.all(WORKERS.map((owner, i) => s.worker(owner, looping(`job-${(i % 2) + 1}`))));
    await more(s, 'Write', 8);
    const owners = new Map(
      s.operations.filter(ok('Acquire')).map((op) => [String(op.request.resource), sinkOf(op)] as const),
    );
    expect(new Set(owners.values())).toEqual(new Set(['sink-1', 'sink-2']));
    const down = owners.get('job-2')!;
    const restart = await s.inject(crash(s.cluster, down as 'sink-1' | 'sink-2'));
    const crashedAt = performance.timeOrigin + performance.now();
    // Availability isolation: job-1's sink keeps granting and storing while job-2's is down.
    const writesOn = (resource: string, after: number) =>
      s.operations.filter((op) => ok('Write')(op) && op.request.resource === resource && op.invokedMs > after);
    await eventually(() => (writesOn('job-1', crashedAt).length >= 4 ? true : undefined), {
      timeoutMs: 30_000,
      what: `4 writes on job-1 while ${down} is down`,
    });
    expect(writesOn('job-2', crashedAt)).toEqual([]);
    expect(s.operations.some((op) => op.request.resource === 'job-2' && op.invokedMs > crashedAt)).toBe(true);
    await restart();
    const restartedAt = performance.timeOrigin + performance.now();
    await eventually(() => (writesOn('job-2', restartedAt).length >= 2 ? true : undefined), {
      timeoutMs: 30_000,
      what: `job-2 written again once ${down} is back`,
    });
    const { violations, history } = await s.verdict();
    expect(violations).toEqual([]);
    // S5 judged on each sink's own final state: job-2's writes acknowledged before the crash are on the restarted sink.
    const before = history.operations.filter(
      (op) => ok('Write')(op) && op.request.resource === 'job-2' && op.completedMs < crashedAt,
    );
    expect(before.length).toBeGreaterThan(0);
    for (const op of before)
      expect(history.final.results['job-2']?.[String(op.request.result_id)]?.payload).toBe(op.request.payload);
    expect(history.final.misplaced).toEqual([]);
  });

  it('8a. coordinator SIGKILL and restart under load: tokens keep increasing', async () => {
    const s = await scenario('coord_crash', { workers: WORKERS });
    await Promise.all(WORKERS.map((owner, i) => s.worker(owner, looping(`job-${i % 2}`))));
    await more(s, 'Acquire', 4);
    const restart = await s.inject(crash(s.cluster, 'coordinator'));
    await restart();
    await more(s, 'Acquire', 4);
    const { violations, history } = await s.verdict();
    expect(violations).toEqual([]);
    for (const [resource, tokens] of grantsByResource(history.operations)) {
      expect(tokens, resource).toEqual([...tokens].sort((a, b) => (a < b ? -1 : 1)));
      expect(new Set(tokens).size, resource).toBe(tokens.length);
    }
  });

  it('8b. a coordinator restarted with its data still answers a replay (R3)', async () => {
    const s = await scenario('coord_replay');
    const b = await s.worker('worker-b', scripted('job', 10_000, 300));
    await connectFirst(b);
    const heal = await s.inject(replyLoss(b.links.coordinator));
    b.send('acquire');
    const granted = await eventually(async () => (await s.admin.coordinator.describe('job')).lease, {
      what: 'the grant at the coordinator',
    });
    const restart = await s.inject(crash(s.cluster, 'coordinator'));
    await restart();
    await heal();
    // On a loaded machine the restart can outlast the library's retries of
    // this acquisition; then the worker retries it by hand with the same
    // request id (R1), as a worker that kept the id across a failure would.
    const ended = await b.next(['acquired', 'refused'], { timeoutMs: 30_000 });
    if (ended.event === 'refused') {
      const sent = b.events.find((e) => e.event === 'sending' && e.method === 'Acquire');
      if (sent?.event !== 'sending') throw new Error('worker-b sent no Acquire');
      b.send(`acquire ${String(sent.request['request_id'])}`);
    }
    const acquired = ended.event === 'acquired' ? ended : await b.next('acquired', { timeoutMs: 20_000 });
    expect([BigInt(acquired.token), acquired.replayed]).toEqual([granted.token, true]);
    expect(await s.verdict()).toMatchObject({ violations: [], unchecked: [] });
  });

  it('8c. a coordinator restarted with its data lost resumes above the fence (L6); the old holder is refused', async () => {
    const s = await scenario('coord_wipe');
    const a = await s.worker('worker-a', scripted('job', 10_000));
    const b = await s.worker('worker-b', scripted('job', 10_000));
    for (let i = 0; i < 3; i++) {
      await acquire(a);
      a.send('release');
      await a.next('released');
    }
    const tokenA = await acquire(a);
    expect(await write(a, 'a-1', 'A1')).toMatchObject({ event: 'written' });
    const restart = await s.inject(crash(s.cluster, 'coordinator', { wipeData: true }));
    await restart();
    // The new coordinator knows nothing of A's lease: B gets the resource, above A's token.
    const tokenB = await acquire(b);
    expect(tokenB).toBeGreaterThan(tokenA);
    expect(await write(a, 'a-2', 'A2')).toMatchObject({ event: 'refused', reason: 'STALE_TOKEN' });
    expect(await write(b, 'b-1', 'B1')).toMatchObject({ event: 'written', outcome: 'applied' });
    expect(await s.verdict({ exclusiveLeases: false })).toMatchObject({ violations: [], unchecked: [] });
  });

  it('9. split brain: two coordinators, one sink; S1 and S3 still hold', async () => {
    const s = await scenario('split_brain', { workers: WORKERS });
    const rival = splitBrain(s.cluster);
    // Left running: the verdict heals it, and records its period.
    await s.inject(rival);
    const rivalAddress = rival.rival!.ready.address;
    // Two workers per coordinator, all on the same two resources.
    await Promise.all(
      WORKERS.map((owner, i) => s.worker(owner, looping(`job-${i % 2}`), i < 2 ? {} : { coordinator: rivalAddress })),
    );
    await more(s, 'Write', 16);
    const coordinators = new Set(
      s.operations.filter(ok('Acquire')).map((op) => (['worker-a', 'worker-b'].includes(op.process) ? 'own' : 'rival')),
    );
    expect(coordinators).toEqual(new Set(['own', 'rival']));
    const { violations, history } = await s.verdict({ exclusiveLeases: false });
    expect(violations).toEqual([]);
    expect(history.faults).toEqual([expect.objectContaining({ name: 'split-brain', target: 'coordinator-2' })]);
  });
});
