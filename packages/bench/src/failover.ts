// The failover row of `fencer bench`: two coordinator replicas on the run's
// etcd (H1, H2) and its sink; the leader is SIGKILLed, and the time is taken
// from the kill to the first Acquire the new leader grants to a client that
// knows both addresses and follows NOT_LEADER (H7). The killed replica then
// starts again on its address, as a standby, and the next round kills
// whichever leads. Not a closed loop: each round is one number.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { CoordinatorConnection } from '@fencer/client';
import { spawnLogged, stopChild, type ReadyChild } from '@fencer/supervisor';
import type { Progress } from './progress.js';
import { markdownTable } from '@fencer/common';
import { median } from './report.js';
import { BENCH_WORKER, benchCoordinatorArgs, etcdStoreArgs, untilLeading, type Targets } from './targets.js';

/** The failover row's `--cases` id: not one of CASES, whose closed loop it does not fit. */
export const FAILOVER_CASE = 'failover';

/** What the failover row runs with. */
export interface FailoverConfig {
  /** Kills of the leader. */
  readonly failovers: number;
  /** The replicas' --leader-ttl-ms: the election session's TTL (H2). */
  readonly leaderTtlMs: number;
}

/** What the failover row found. */
export interface FailoverReport {
  readonly replicas: 2;
  readonly leaderTtlMs: number;
  /** The replicas' pids, every process each round started, for the caller to check none is left. */
  readonly pids: readonly number[];
  /** From each SIGKILL to the new leader's first grant, in round order. */
  readonly killToGrantMs: readonly number[];
  readonly p50Ms: number;
  readonly maxMs: number;
  /** The target for the max: the session TTL + 1 s. */
  readonly targetMaxMs: number;
}

/** The replicas' etcd prefix: apart from the --store etcd case's coordinator. */
const FAILOVER_PREFIX = '/fencer-bench-failover/';
/** Between two Acquires while no replica leads: short next to a TTL of seconds, so the delay adds little to the figure. */
const RETRY_MS = 20;
/** Deadline of each Acquire: a dead replica refuses at once, a live one answers fast. */
const CALL_TIMEOUT_MS = 2_000;
/** Far past any TTL --leader-ttl-ms allows plus an election: a round stuck this long fails the run. */
const STUCK_AFTER_MS = 120_000;
const STOP_GRACE_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `config.failovers` rounds against two replicas it starts and stops itself. */
export async function runFailover(
  targets: Targets,
  config: FailoverConfig,
  progress: Progress,
  signal: AbortSignal,
): Promise<FailoverReport> {
  const etcd = targets.etcd;
  if (!etcd) throw new Error('etcd is not running');
  const start = (index: number, listen?: string) =>
    spawnLogged(
      `failover replica ${index + 1}`,
      benchCoordinatorArgs({
        data: join(targets.scratch, `failover-replica-${index + 1}`),
        sink: targets.sink.ready.address,
        credentials: targets.credentials,
        ...(listen === undefined ? {} : { listen }),
        store: etcdStoreArgs(etcd.endpoints, FAILOVER_PREFIX, ['--leader-ttl-ms', String(config.leaderTtlMs)]),
      }),
      join(targets.logs, `failover-replica-${index + 1}.log`),
      signal,
    );
  const replicas: ReadyChild[] = [];
  const pids: number[] = [];
  let coordinator: CoordinatorConnection | undefined;
  try {
    // One after the other: the first to start is the first leader.
    for (const index of [0, 1]) replicas.push(await start(index));
    const addresses = replicas.map((replica) => replica.ready.address);
    pids.push(...replicas.map((replica) => replica.child.pid!));
    coordinator = new CoordinatorConnection({
      coordinators: addresses,
      token: targets.workerToken,
      callTimeoutMs: CALL_TIMEOUT_MS,
    });
    const killToGrantMs: number[] = [];
    for (let round = 1; round <= config.failovers; round++) {
      const label = `failover ${round}/${config.failovers}, session TTL ${config.leaderTtlMs} ms`;
      progress.begin(label);
      const leader = await untilLeading(addresses, STUCK_AFTER_MS, signal);
      // The standby must be on etcd already, or its own start is measured too.
      await untilStandby(addresses[1 - leader]!, addresses[leader]!, targets.workerToken, signal);
      const killed = replicas[leader]!;
      const killedAtMs = performance.now();
      killed.child.kill('SIGKILL');
      const resource = `failover-${round}`;
      // One request id for every attempt: an Acquire granted whose answer was lost is replayed, not granted twice (R4).
      const request = { requestId: randomUUID(), resource, ownerId: BENCH_WORKER, incarnation: 1n, ttlMs: 10_000 };
      let granted: { token: bigint } | undefined;
      while (granted === undefined) {
        signal.throwIfAborted();
        if (performance.now() - killedAtMs > STUCK_AFTER_MS)
          throw new Error(`no replica granted an Acquire ${STUCK_AFTER_MS} ms after the leader was killed`);
        try {
          granted = (await coordinator.acquire(request)).lease;
        } catch {
          // NOT_LEADER from the standby until its election, UNAVAILABLE from the dead one: try again.
          await sleep(RETRY_MS);
        }
      }
      const elapsedMs = performance.now() - killedAtMs;
      killToGrantMs.push(elapsedMs);
      await coordinator.release({ resource, ownerId: BENCH_WORKER, incarnation: 1n, token: granted.token });
      await killed.exited;
      // Back on the address it had, which is what the client knows (H7).
      replicas[leader] = await start(leader, killed.ready.address);
      pids.push(replicas[leader].child.pid!);
      progress.end(label, `kill to grant ${elapsedMs.toFixed(0)} ms`);
    }
    return {
      replicas: 2,
      pids,
      leaderTtlMs: config.leaderTtlMs,
      killToGrantMs,
      p50Ms: median(killToGrantMs),
      maxMs: Math.max(...killToGrantMs),
      targetMaxMs: config.leaderTtlMs + 1_000,
    };
  } finally {
    coordinator?.close();
    for (const replica of replicas) await stopChild(replica, STOP_GRACE_MS);
  }
}

/**
 * Resolves once the replica at `standby` sends an Acquire on to `leader`
 * (NOT_LEADER naming it, H2, H7), which grants it: the standby has read the
 * election from etcd, so it is campaigning behind the leader. The probe's
 * lease is given back.
 */
async function untilStandby(standby: string, leader: string, token: string, signal: AbortSignal): Promise<void> {
  // Only the standby's address: the call reaches the leader only if the standby names it.
  const connection = new CoordinatorConnection({ address: standby, token, callTimeoutMs: CALL_TIMEOUT_MS });
  const deadline = performance.now() + STUCK_AFTER_MS;
  const identity = { resource: `failover-probe-${randomUUID()}`, ownerId: BENCH_WORKER, incarnation: 1n };
  try {
    for (;;) {
      signal.throwIfAborted();
      const granted = await connection.acquire({ ...identity, requestId: randomUUID(), ttlMs: 1_000 }).then(
        ({ lease }) => lease,
        (error: unknown) => error as Error,
      );
      if (!(granted instanceof Error)) {
        await connection.release({ ...identity, token: granted.token });
        if (connection.address === leader) return;
        throw new Error(`the standby at ${standby} granted an Acquire while ${leader} led (H2)`);
      }
      if (performance.now() > deadline)
        throw new Error(`the replica at ${standby} did not send an Acquire on to ${leader}: ${granted.message}`);
      await sleep(RETRY_MS);
    }
  } finally {
    connection.close();
  }
}

/** The failover row, with its target beside it. */
export function failoverTable(report: FailoverReport): string {
  return markdownTable(
    ['failover (SIGKILL leader to first grant)', 'failovers', 'p50 ms', 'max ms', 'target max ms'],
    [
      [
        `${report.replicas} replicas on etcd, session TTL ${report.leaderTtlMs} ms`,
        String(report.killToGrantMs.length),
        report.p50Ms.toFixed(0),
        report.maxMs.toFixed(0),
        `≤ ${report.targetMaxMs} (TTL + 1 s)`,
      ],
    ],
    [false, true, true, true, true],
  );
}
