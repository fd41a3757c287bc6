// The takeover story of PROTOCOL.md, told with real processes: two
// `fencer worker` processes built on @fencer/client, a sink and a
// coordinator, every worker link through a Toxiproxy proxy. Each claim the
// story makes is checked against what the services answer, never assumed.
import type { Toxiproxy } from 'toxiproxy-node-client';
import type { CoordinatorConnection, SinkConnection } from '@fencer/client';
import type { Cluster, StampedWorkerEvent, WorkerProcess } from '@fencer/supervisor';
import type { Narrator } from './narrator.js';

/** Everyone the story needs. */
export interface StoryCast {
  readonly cluster: Cluster;
  readonly toxiproxy: Toxiproxy;
  /** Workers A and B, started with --commands. */
  readonly a: WorkerProcess;
  readonly b: WorkerProcess;
  /** The demo's own view, straight to the services with the admin's credentials (Describe, GetFence, Read). */
  readonly admin: { readonly coordinator: CoordinatorConnection; readonly sink: SinkConnection };
  /** Straight to the sink with A's credentials: a request of A's already on its way when A froze. */
  readonly inFlightFromA: SinkConnection;
  readonly resource: string;
  readonly ttlMsA: number;
}

type WriteOutcome = Extract<StampedWorkerEvent, { event: 'written' | 'refused' }>;

const describeOutcome = (outcome: WriteOutcome) =>
  outcome.event === 'written'
    ? `${outcome.outcome.toUpperCase()}, fence ${outcome.fence}`
    : `${outcome.code} ${outcome.reason}`;

/** Polls `probe` every 50 ms until it yields a value, for at most `timeoutMs`. */
async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Tells the six steps; every claim goes to the narrator's checks. */
export async function tellStory(cast: StoryCast, say: Narrator): Promise<void> {
  const { a, b, admin, resource } = cast;
  const acknowledged = new Map<string, string>(); // result id → payload the sink acknowledged

  const write = async (worker: WorkerProcess, resultId: string, payload: string): Promise<WriteOutcome> => {
    worker.send(`write ${resultId} ${payload}`);
    const outcome = await worker.next(['written', 'refused']);
    if (outcome.event === 'written') acknowledged.set(resultId, payload);
    return outcome;
  };
  const fence = () => admin.sink.getFence(resource);

  // 1 ─────────────────────────────────────────────────────────────────────
  say.step(1, 'Worker A takes the lease, writes, and freezes');
  a.send('acquire');
  const tokenA = BigInt((await a.next('acquired')).token);
  say.say(`A (pid ${a.child.pid}) holds "${resource}" with token ${tokenA} and a ${cast.ttlMsA} ms lease.`);
  say.check(`the sink's fence is A's token ${tokenA}`, (await fence()) === tokenA, `fence ${await fence()}`);
  const a1 = await write(a, 'a-1', 'A:result-1');
  say.check(`A's result a-1 is APPLIED`, a1.event === 'written' && a1.outcome === 'applied', describeOutcome(a1));
  say.say('A computes its next result, a-2; before it can send it, A is frozen with SIGSTOP.');
  a.child.kill('SIGSTOP');
  const frozenAt = performance.now();
  await until("A's lease to expire at the coordinator", cast.ttlMsA * 4 + 5_000, async () =>
    (await admin.coordinator.describe(resource)).lease ? undefined : true,
  );
  const expiredAfterMs = Math.round(performance.now() - frozenAt);
  say.say(`${expiredAfterMs} ms later the coordinator, on its own clock, counts A's lease as expired.`);
  say.check("A's lease expired while A was frozen", true, `Describe shows no lease after ${expiredAfterMs} ms`);

  // 2 ─────────────────────────────────────────────────────────────────────
  say.step(2, 'The lease expired, and nobody took over');
  const fence2 = await fence();
  say.say(`Nothing has moved the fence: it is still ${fence2}, A's token.`);
  say.say(`A request A had sent just before it froze arrives now, with token ${tokenA}:`);
  const late = await cast.inFlightFromA
    .write({ resource, token: tokenA, resultId: 'a-in-flight', payload: Buffer.from('A:in-flight') })
    .then(
      (receipt) => `${receipt.outcome.toUpperCase()}, fence ${receipt.fence}`,
      (error: Error) => error.message,
    );
  if (late.startsWith('APPLIED')) acknowledged.set('a-in-flight', 'A:in-flight');
  say.check(`an expired holder's write is still ACCEPTED (F5)`, fence2 === tokenA && late.startsWith('APPLIED'), late);
  say.say('Expiry alone does not fence. Only a takeover, which moves the fence first, will stop A.');

  // 3 ─────────────────────────────────────────────────────────────────────
  say.step(3, 'Worker B takes over; A wakes up');
  b.send('acquire');
  const tokenB = BigInt((await b.next('acquired')).token);
  const fence3 = await fence();
  say.say(
    `B (pid ${b.child.pid}) holds token ${tokenB}; the coordinator moved the sink's fence to it before answering B.`,
  );
  say.check(
    `B's token ${tokenB} is larger than A's ${tokenA}, and is the fence`,
    tokenB > tokenA && fence3 === tokenB,
    `fence ${fence3}`,
  );
  say.say('A resumes (SIGCONT). It has not renewed since before its local deadline:');
  a.child.kill('SIGCONT');
  const lost = await a.next('lease-lost');
  say.check("A's library fires its lease-lost signal", lost.reason === 'LOCAL_DEADLINE_PASSED', lost.reason);
  say.say(`A sends the result it had computed, a-2, with token ${tokenA}:`);
  const a2 = await write(a, 'a-2', 'A:result-2');
  say.check(
    "the sink refuses A's stale result: STALE_TOKEN",
    a2.event === 'refused' && a2.reason === 'STALE_TOKEN' && a2.details.fence === String(tokenB),
    describeOutcome(a2),
  );
  const b1 = await write(b, 'b-1', 'B:result-1');
  say.check("B's result b-1 is APPLIED", b1.event === 'written' && b1.outcome === 'applied', describeOutcome(b1));

  // 4 ─────────────────────────────────────────────────────────────────────
  say.step(4, 'A retried write is stored once; a different one under the same id is refused');
  const replay = await write(b, 'b-1', 'B:result-1');
  say.check(
    'b-1 sent again with the same payload is REPLAYED (F3)',
    replay.event === 'written' && replay.outcome === 'replayed',
    describeOutcome(replay),
  );
  const conflict = await write(b, 'b-1', 'B:something-else');
  say.check(
    'b-1 with a different payload is refused RESULT_CONFLICT',
    conflict.event === 'refused' && conflict.reason === 'RESULT_CONFLICT',
    describeOutcome(conflict),
  );
  const stored = (await admin.sink.read(resource, 'b-1')).payload.toString();
  say.check('b-1 still holds its first payload', stored === 'B:result-1', stored);

  // 5 ─────────────────────────────────────────────────────────────────────
  say.step(5, "B's grant receipt is lost");
  b.send('release');
  await b.next('released');
  const proxy = await cast.toxiproxy.get(cast.cluster.proxyNames.workersToCoordinator);
  const toxic = await proxy.addToxic({
    name: 'drop_grant_receipts',
    type: 'timeout',
    stream: 'downstream',
    toxicity: 1,
    attributes: { timeout: 0 },
  } as never);
  say.say(`B released, and asks again; a toxic on the ${proxy.name} proxy now swallows every reply.`);
  const from = b.events.length;
  b.send('acquire');
  let granted: bigint;
  let failedAttempt: StampedWorkerEvent & { event: 'call' };
  try {
    granted = await until('the grant at the coordinator', 10_000, async () => {
      const lease = (await admin.coordinator.describe(resource)).lease;
      return lease && lease.ownerId === b.owner && lease.token > tokenB ? lease.token : undefined;
    });
    failedAttempt = await b.next('call', { where: (e) => e.method === 'Acquire' && e.outcome !== 'ok' });
  } finally {
    await toxic.remove();
  }
  say.say(`The coordinator granted token ${granted}, but B's attempt ended ${failedAttempt.code}: B never heard.`);
  say.say('The toxic is removed; B retries.');
  const again = await b.next('acquired');
  const attempts = b.events.slice(from).filter((e) => e.event === 'call' && e.method === 'Acquire');
  const requestIds = new Set(attempts.map((e) => (e.event === 'call' ? String(e.request.request_id) : '')));
  say.check(
    'every attempt carried the same request id (R4)',
    requestIds.size === 1 && requestIds.has(again.requestId),
    `${attempts.length} attempts, request ids ${[...requestIds].join(', ')}`,
  );
  say.check(
    `the retry got the recorded grant, token ${granted}, marked replayed (R1)`,
    BigInt(again.token) === granted && again.replayed,
    `token ${again.token}, replayed ${again.replayed}`,
  );
  const { lastToken } = await admin.coordinator.describe(resource);
  const fence5 = await fence();
  say.check(
    'the fence moved once: the last token granted and the fence are that token',
    lastToken === granted && fence5 === granted,
    `last token ${lastToken}, fence ${fence5}`,
  );
  const b2 = await write(b, 'b-2', 'B:result-2');
  say.check(
    "B's result b-2 under the replayed grant is APPLIED",
    b2.event === 'written' && b2.outcome === 'applied',
    describeOutcome(b2),
  );

  // 6 ─────────────────────────────────────────────────────────────────────
  say.step(6, 'The sink crashes');
  const fenceBefore = await fence();
  const oldPid = cast.cluster.sink.child.pid;
  await cast.cluster.kill('sink');
  say.say(`The sink (pid ${oldPid}) is killed with SIGKILL, then started again on the same address and data.`);
  const restarted = await cast.cluster.restart('sink');
  say.say(`The new sink (pid ${restarted.child.pid}) is serving.`);
  const fenceAfter = await until('the restarted sink to answer', 10_000, fence);
  say.check(`the fence survived the crash: ${fenceBefore}`, fenceAfter === fenceBefore, `fence ${fenceAfter}`);
  const missing: string[] = [];
  for (const [resultId, payload] of acknowledged) {
    const read = await admin.sink.read(resource, resultId).catch(() => undefined);
    if (read?.payload.toString() !== payload) missing.push(resultId);
  }
  say.check(
    `every acknowledged result is intact (${[...acknowledged.keys()].join(', ')})`,
    missing.length === 0 && acknowledged.size > 0,
    missing.length === 0
      ? `${acknowledged.size} of ${acknowledged.size} read back`
      : `lost or changed: ${missing.join(', ')}`,
  );
  b.send('release');
  await b.next('released');
}
