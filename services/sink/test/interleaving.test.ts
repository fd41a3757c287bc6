// The interleaving this project exists to prevent (F2, S3, S4, S6), over real
// gRPC: many Writes with token t race an AdvanceFence(t+1). The history of
// what was acknowledged and what is stored must show that every accepted
// token-t write was accepted BEFORE the advance was acknowledged, that none
// was accepted after it, and that no result ever holds two payloads.
//
// Teeth: if the sink checked the fence and committed in two steps, a write
// could pass the check (fence = t), the advance to t+1 could be acknowledged,
// the successor's write of the same result_id could be applied, and only then
// would the old write land: a token-t result that was not visible right after
// the advance (S3), two APPLIED answers for one result_id (S6), and a token-t
// result stored over a token-t+1 one (S4). The last test runs the very same
// scenario and checker against such a two-step engine, with a pause between
// its check and its commit standing in for any delay (GC, I/O), and shows the
// checker reports exactly those violations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRound, racingPayload, successorPayload, type RoundHistory, type StoredValue } from '@fencer/chaos';
import { KeyedLock } from '@fencer/common';
import { tempDir, readOrMissing, sinkCalls, writeOutcome, type SinkCalls } from '@fencer/testkit';
import { startSink, sinkConfig, type RunningSink } from '../src/index.js';
import { openLevelStore } from '../src/adapters/level-store.js';
import { decideWrite } from '../src/core/fence-policy.js';
import { SinkEngine, type SinkApi, type WriteCommand, type WriteOutcome } from '../src/core/sink-engine.js';
import type { SinkStore } from '../src/core/store.js';
import { serveSinkApi } from './helpers.js';

async function stored(client: SinkCalls, resource: string, resultId: string): Promise<StoredValue | undefined> {
  const found = await readOrMissing(client, resource, resultId);
  return found && { token: found.token, payload: found.payload.toString() };
}

/**
 * One round on `resource`: fence at t, n racing token-t writes with the
 * AdvanceFence(t+1) sent among them; on its ack, reads, then the
 * successor's token-t+1 rewrites and late token-t writes.
 */
async function runRound(
  clients: { coordinator: SinkCalls; workers: SinkCalls[] },
  resource: string,
  t: bigint,
  n: number,
  hooks: { beforeAdvance?: () => Promise<void>; beforeAwaitingRacers?: () => void } = {},
): Promise<RoundHistory> {
  const { coordinator, workers } = clients;
  await coordinator.advance({ resource, token: t.toString(), grant_id: `grant-${t}` });
  const worker = (i: number) => workers[i % workers.length]!;
  const racing: Promise<{ outcome: string; fence: string }>[] = [];
  const send = (i: number) =>
    racing.push(
      writeOutcome(
        worker(i).write({
          resource,
          token: t.toString(),
          result_id: `w-${i}`,
          payload: Buffer.from(racingPayload(t, i)),
        }),
      ),
    );
  // The advance goes out after a varying share of the racing writes, each
  // batch of writes a separate event-loop turn apart.
  const split = Math.max(1, Math.floor((n * (1 + Number(t % 3n))) / 4));
  for (let i = 0; i < split; i++) {
    send(i);
    if (i % 4 === 3) await new Promise((resolve) => setImmediate(resolve));
  }
  await (hooks.beforeAdvance?.() ?? new Promise((resolve) => setImmediate(resolve)));
  const advanced = coordinator.advance({ resource, token: (t + 1n).toString(), grant_id: `grant-${t + 1n}` });
  for (let i = split; i < n; i++) send(i);

  let advance: RoundHistory['advance'];
  try {
    advance = await advanced;
  } catch (error) {
    advance = { error: String(error) };
  }
  // Everything below is issued strictly after the advance was acknowledged.
  const readAfterAdvance = await Promise.all(
    Array.from({ length: n }, (_, i) => stored(worker(i), resource, `w-${i}`)),
  );
  const [successor, late] = await Promise.all([
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        writeOutcome(
          worker(i).write({
            resource,
            token: (t + 1n).toString(),
            result_id: `w-${i}`,
            payload: Buffer.from(successorPayload(t, i)),
          }),
        ),
      ),
    ),
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        writeOutcome(
          worker(i).write({ resource, token: t.toString(), result_id: `late-${i}`, payload: Buffer.from('late') }),
        ),
      ),
    ),
  ]);
  hooks.beforeAwaitingRacers?.();
  const racingOutcomes = await Promise.all(racing);
  const final = await Promise.all(Array.from({ length: n }, (_, i) => stored(coordinator, resource, `w-${i}`)));
  return { resource, t, advance, racing: racingOutcomes, readAfterAdvance, successor, late, final };
}

/** Runs `rounds` rounds on each of `resources` resources (resources in parallel). */
async function scenario(
  address: string,
  options: { resources: number; rounds: number; n: number },
  hooks?: Parameters<typeof runRound>[4],
) {
  const coordinator = sinkCalls(address);
  // Several channels, so the racing writes and the advance do not share one ordered connection.
  const workers = Array.from({ length: 3 }, () => sinkCalls(address));
  try {
    const perResource = await Promise.all(
      Array.from({ length: options.resources }, async (_, r) => {
        const histories: RoundHistory[] = [];
        for (let round = 0; round < options.rounds; round++) {
          histories.push(
            await runRound(
              { coordinator, workers },
              `job-${r}-round-${round}`,
              BigInt(1 + round * 3 + r),
              options.n,
              hooks,
            ),
          );
        }
        return histories;
      }),
    );
    return perResource.flat();
  } finally {
    for (const client of [coordinator, ...workers]) client.close();
  }
}

describe('Writes racing AdvanceFence over gRPC (F2, S3, S4, S6)', () => {
  let dir: ReturnType<typeof tempDir>;
  let sink: RunningSink;

  beforeAll(async () => {
    dir = tempDir('fencer-sink-race-');
    sink = await startSink(
      sinkConfig({ listen: '127.0.0.1:0', data: dir.path, insecure: true, maxPayloadBytes: 1024 * 1024 }),
    );
  });
  afterAll(async () => {
    await sink?.stop();
    dir?.remove();
  });

  it('no token-t write is accepted after AdvanceFence(t+1) is acknowledged, over many rounds and resources', async () => {
    const histories = await scenario(sink.address, { resources: 3, rounds: 4, n: 40 });
    expect(histories.flatMap(checkRound)).toEqual([]);
    // The race really happened: some racing writes won, some lost.
    const outcomes = histories.flatMap((h) => h.racing.map((r) => r.outcome));
    expect(outcomes).toContain('APPLIED');
    expect(outcomes).toContain('STALE_TOKEN');
  });
});

/**
 * The bug: the fence is checked in one step and the result committed in
 * another, so an AdvanceFence can slip in between. `pause` runs between the
 * two steps of every write that passed the check.
 */
class TwoStepEngine implements SinkApi {
  readonly #lock = new KeyedLock();
  readonly #correct: SinkEngine;

  constructor(
    private readonly store: SinkStore,
    private readonly pause: (command: WriteCommand) => Promise<void>,
  ) {
    this.#correct = new SinkEngine(store);
  }

  async write(command: WriteCommand): Promise<WriteOutcome> {
    const { fence, decision } = await this.#lock.run(command.resource, async () => {
      const current = await this.store.fence(command.resource);
      const existing = await this.store.result(command.resource, command.resultId);
      return { fence: current?.fence ?? 0n, decision: decideWrite(current, existing, command) };
    });
    switch (decision.kind) {
      case 'apply':
        await this.pause(command);
        await this.store.commit([
          {
            kind: 'result',
            resource: command.resource,
            resultId: command.resultId,
            result: { token: command.token, payload: command.payload },
          },
        ]);
        return { kind: 'applied', fence };
      case 'replayed':
      case 'conflict':
        return { kind: decision.kind, fence };
      case 'stale':
      case 'not-issued':
      case 'owner-mismatch':
        return { kind: decision.kind, fence: decision.fence };
    }
  }

  advanceFence: SinkApi['advanceFence'] = (command) => this.#correct.advanceFence(command);
  read: SinkApi['read'] = (resource, resultId) => this.#correct.read(resource, resultId);
  getFence: SinkApi['getFence'] = (resource) => this.#correct.getFence(resource);
  inspect: SinkApi['inspect'] = (resource, limit) => this.#correct.inspect(resource, limit);
}

describe('the checker has teeth', () => {
  it('flags S3, S4 and S6 violations when the check and the commit are two steps', async () => {
    const dir = tempDir('fencer-sink-race-');
    const { store } = await openLevelStore(dir.path);
    // Writes that passed the check under the old token wait here until the
    // successor has written: the widest form of the window a two-step sink has.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let firstPaused!: () => void;
    const paused = new Promise<void>((resolve) => (firstPaused = resolve));
    const racingToken = new Set<bigint>();
    const engine = new TwoStepEngine(store, async (command) => {
      if (!racingToken.has(command.token)) return;
      firstPaused();
      await gate;
    });
    const server = await serveSinkApi(engine);
    try {
      racingToken.add(1n);
      const histories = await scenario(
        server.address,
        { resources: 1, rounds: 1, n: 10 },
        {
          beforeAdvance: () => paused,
          beforeAwaitingRacers: () => release(),
        },
      );
      const found = histories.flatMap(checkRound);
      const rules = new Set(found.map((violation) => violation.rule));
      expect(rules).toContain('S3');
      expect(rules).toContain('S6');
      expect(rules).toContain('S4');
    } finally {
      release();
      await server.stop();
      await store.close();
      dir.remove();
    }
  });
});
