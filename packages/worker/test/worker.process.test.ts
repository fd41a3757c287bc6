// `fencer worker` as a real process against a real secured cluster: a
// worker paused with SIGSTOP past its TTL learns on waking that its lease is
// gone (the library's signal fires), and the result it then submits is
// refused by the sink (F1); looping workers take turns with distinct tokens;
// workers running a generator's mix send every call, stale writes included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinatorConnection, LeaseKeeper } from '@fencer/client';
import { credentialToken, startWorker, type Cluster, type WorkerProcess } from '@fencer/supervisor';
import { eventually, runFencer, startTestCluster } from '@fencer/testkit';

let cluster: Cluster;
let stopCluster: () => Promise<void>;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  ({ cluster, stop: stopCluster } = await startTestCluster('fencer-worker-'));
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await stopCluster?.();
});

const worker = async (owner: 'worker-a' | 'worker-b', args: string[]) => {
  const started = await startWorker({
    coordinator: cluster.links.workersToCoordinator,
    sink: cluster.links.workersToSink,
    owner,
    tokenFile: cluster.credentials!.workerTokenFiles[owner]!,
    args,
  });
  workers.push(started);
  return started;
};

const directCoordinator = (owner: string) =>
  new CoordinatorConnection({
    address: cluster.coordinator.ready.address,
    token: credentialToken(cluster.credentials!.credentialsFile, { identity: owner }),
  });

describe('fencer worker', () => {
  it('paused past its TTL: the lease-lost event on waking, then its stale result refused STALE_TOKEN', async () => {
    // 2 s, not less: on a loaded machine an Acquire alone can take most of a
    // shorter TTL, and the lease would be lost before the first write.
    const a = await worker('worker-a', ['--commands', '--resource', 'paused', '--ttl-ms', '2000']);
    a.send('acquire');
    // Token values are not assumed: a grant that failed under load burns a token (L3).
    const tokenA = BigInt((await a.next('acquired')).token);
    a.send('write before-pause computed-by-a');
    expect((await a.next('written')).outcome).toBe('applied');

    let tokenB = 0n;
    a.child.kill('SIGSTOP');
    const coordinator = directCoordinator('worker-b');
    try {
      // The coordinator's own clock decides the lease is over (L1), then B takes over.
      await eventually(async () => ((await coordinator.describe('paused')).lease ? undefined : true), {
        what: "A's lease to expire at the coordinator",
        intervalMs: 50,
      });
      await using b = await LeaseKeeper.acquire(coordinator, { resource: 'paused', ownerId: 'worker-b', ttlMs: 5_000 });
      tokenB = b.token;
      expect(tokenB).toBeGreaterThan(tokenA);
    } finally {
      a.child.kill('SIGCONT');
      coordinator.close();
    }

    expect((await a.next('lease-lost')).reason).toBe('LOCAL_DEADLINE_PASSED');
    a.send('write after-pause computed-by-a');
    const refused = await a.next('refused');
    expect([refused.command, refused.reason, refused.details.fence]).toEqual(['write', 'STALE_TOKEN', String(tokenB)]);
    a.send('exit');
    expect((await a.exited).code).toBe(0);
  });

  it('a lease lost before its Acquire returned (the answer slower than the TTL) is reported lost too', async () => {
    const toxics = `${cluster.toxiproxy.url}/proxies/${cluster.proxyNames.workersToCoordinator}/toxics`;
    const slow = { name: 'slow-grant', type: 'latency', stream: 'downstream', attributes: { latency: 800 } };
    expect((await fetch(toxics, { method: 'POST', body: JSON.stringify(slow) })).ok).toBe(true);
    try {
      const a = await worker('worker-a', [
        '--commands',
        '--resource',
        'slow',
        '--ttl-ms',
        '500',
        '--call-timeout-ms',
        '5000',
      ]);
      a.send('acquire');
      const { token } = await a.next('acquired');
      expect(await a.next('lease-lost')).toMatchObject({ token, reason: 'LOCAL_DEADLINE_PASSED' });
      a.send('exit');
      expect((await a.exited).code).toBe(0);
    } finally {
      await fetch(`${toxics}/${slow.name}`, { method: 'DELETE' });
    }
  });

  it("forge writes under the token it is given, not its lease's: the sink refuses one never issued (F1)", async () => {
    const a = await worker('worker-a', ['--commands', '--resource', 'forged']);
    a.send('acquire');
    const token = BigInt((await a.next('acquired')).token);
    a.send(`forge ${token + 5n} guessed made-up`);
    const refused = await a.next('refused');
    expect([refused.command, refused.reason, refused.details.fence]).toEqual([
      'forge',
      'TOKEN_NOT_ISSUED',
      String(token),
    ]);
    a.send('forge x guessed made-up');
    expect((await a.next('error')).message).toBe('forge: "x" is not a token');
    a.send(`forge ${token} guessed made-up`);
    expect((await a.next('written')).outcome).toBe('applied');
    a.send('exit');
    expect((await a.exited).code).toBe(0);
  });

  // By default results go out as WriteStream messages; --unary-writes sends unary Writes. The outcomes are the same.
  it.each([
    ['WriteStream messages', [], true],
    ['--unary-writes: unary Writes', ['--unary-writes'], false],
  ] as const)('%s: applied, replayed, a conflict and a stale write refused STALE_TOKEN', async (_, flags, streamed) => {
    const resource = streamed ? 'streamed' : 'unary';
    const a = await worker('worker-a', ['--commands', '--resource', resource, ...flags]);
    a.send('acquire');
    await a.next('acquired');
    a.send('write s1 first');
    expect((await a.next('written')).outcome).toBe('applied');
    a.send('write s1 first');
    expect((await a.next('written')).outcome).toBe('replayed');
    a.send('write s1 other');
    expect((await a.next('refused')).reason).toBe('RESULT_CONFLICT');

    // A gives the lease up; B takes it, and the fence moves past A's token.
    a.send('release');
    await a.next('released');
    const coordinator = directCoordinator('worker-b');
    try {
      await using b = await LeaseKeeper.acquire(coordinator, {
        resource,
        ownerId: 'worker-b',
        ttlMs: 5_000,
      });
      a.send('write s2 late');
      const refused = await a.next('refused');
      expect([refused.command, refused.reason, refused.details.fence]).toEqual([
        'write',
        'STALE_TOKEN',
        String(b.token),
      ]);
    } finally {
      coordinator.close();
    }
    a.send('read s1');
    expect((await a.next('read')).payload).toBe('first');
    a.send('exit');
    expect((await a.exited).code).toBe(0);
    const writes = a.events.filter((e) => e.event === 'call' && e.method === 'Write');
    expect(writes).toHaveLength(4);
    expect(writes.map((e) => e.event === 'call' && e.streamed === true)).toEqual(writes.map(() => streamed));
  });

  it('acquire REQUEST_ID retries an earlier acquisition: the same token, replayed (R1)', async () => {
    const a = await worker('worker-a', ['--commands', '--resource', 'retried']);
    a.send('acquire');
    const first = await a.next('acquired');
    a.send(`acquire ${first.requestId}`);
    const again = await a.next('acquired');
    expect([again.token, again.requestId, again.replayed]).toEqual([first.token, first.requestId, true]);
    a.send('exit');
    expect((await a.exited).code).toBe(0);
  });

  it('looping workers on one resource hold it in turns, each lease with its own token', async () => {
    const loop = ['--resource', 'shared', '--ttl-ms', '2000', '--steps', '2', '--step-ms', '50', '--rounds', '2'];
    const [a, b] = await Promise.all([worker('worker-a', loop), worker('worker-b', loop)]);
    expect((await a.exited).code).toBe(0);
    expect((await b.exited).code).toBe(0);
    const tokens = [...a.events, ...b.events].flatMap((e) => (e.event === 'acquired' ? [e.token] : []));
    expect(tokens).toHaveLength(4);
    expect(new Set(tokens).size).toBe(4);
    const written = [...a.events, ...b.events].filter((e) => e.event === 'written');
    expect(written).toHaveLength(8);
    expect(written.every((e) => e.event === 'written' && e.outcome === 'applied')).toBe(true);
  });

  it(
    '--mix: every call is reported; a write paused past the TTL, its lease still believed held, is STALE_TOKEN',
    { timeout: 90_000 },
    async () => {
      const mix = (seed: number) =>
        `--mix default --seed ${seed} --resource mixed --ttl-ms 500 --step-ms 20`.split(' ');
      const [a, b] = await Promise.all([worker('worker-a', mix(1)), worker('worker-b', mix(2))]);
      const methods = () => new Set([...a.events, ...b.events].flatMap((e) => (e.event === 'call' ? [e.method] : [])));
      // A write sent before its worker saw its lease lost (the pause froze the
      // keeper too), refused since a successor was granted meanwhile.
      const believedStale = (w: WorkerProcess) =>
        w.events.some((e, i) => {
          if (e.event !== 'call' || e.method !== 'Write' || e.outcome !== 'STALE_TOKEN') return false;
          const sent = w.events.findIndex((s) => s.event === 'sending' && s.seq === e.seq);
          const granted = w.events
            .slice(0, sent)
            .reduce((last, g, j) => (g.event === 'acquired' && g.token === e.request.token ? j : last), -1);
          const lost = w.events.findIndex(
            (l, j) => j > granted && j < i && l.event === 'lease-lost' && l.token === e.request.token,
          );
          return granted >= 0 && (lost === -1 || lost > sent);
        });
      await eventually(() => ((believedStale(a) || believedStale(b)) && methods().size === 6 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: 'a write the library believed in refused STALE_TOKEN, and every call but Describe',
      });
      expect(methods()).toEqual(new Set(['Acquire', 'Renew', 'Release', 'Write', 'Read', 'GetFence']));
      for (const w of [a, b]) expect((await w.stop()).code).toBe(0);
    },
  );

  it('refuses to start without credentials or --insecure, and with an unreadable token file', async () => {
    const base = ['worker', '--coordinator', '127.0.0.1:1', '--sink', '127.0.0.1:2', '--owner', 'x'];
    const missing = await runFencer(base);
    expect([missing.code, missing.stderr.trim()]).toEqual([
      1,
      'error: give --token-file FILE, a client certificate (--tls-cert, --tls-key) or --insecure',
    ]);
    const unreadable = await runFencer([...base, '--token-file', '/nonexistent/token']);
    expect([unreadable.code, unreadable.stderr.trim()]).toEqual([
      1,
      'error: cannot read --token-file /nonexistent/token: ENOENT',
    ]);
    const noOwner = await runFencer(['worker', '--coordinator', '127.0.0.1:1', '--sink', '127.0.0.1:2', '--insecure']);
    expect(noOwner.code).toBe(1);
    expect(noOwner.stderr).toContain("required option '--owner <id>' not specified");
  });
});
