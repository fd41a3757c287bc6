// The process nemeses against a real cluster with authentication on, each
// judged from outside: the process's state as the kernel reports it, what
// callers see while the fault is on, and what PROTOCOL.md says must hold
// after heal(): S5 across a sink crash, L7 across a coordinator crash, L6
// across a lost coordinator disk, S3 against a rival coordinator.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteFailure } from '@fencer/proto';
import { readCredentialsFile } from '@fencer/server-kit';
import { isProcessAlive, startCluster, type Cluster } from '@fencer/supervisor';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  eventually,
  hasSettled,
  ok,
  readOrMissing,
  refused,
  sinkCalls,
  tempDir,
  writeOutcome,
  type SinkCalls,
} from '@fencer/testkit';
import { Toxiproxy } from 'toxiproxy-node-client';
import { crash, partition, pause, serviceProcess, splitBrain, type Nemesis } from '../../src/index.js';

const CHANNEL: grpc.ClientOptions = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.min_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 500,
};
const RESTARTED = { timeoutMs: 10_000, intervalMs: 100 };
const TTL_MS = '60000'; // nothing here may see a lease run out on its own

const dir = tempDir('fencer-nemesis-process-');
let cluster: Cluster;
let tokens: Record<'worker-a' | 'worker-b' | 'admin', string>;
const closers: (() => void)[] = [];
const nemeses: Nemesis[] = [];

beforeAll(async () => {
  cluster = await startCluster({
    data: dir.path,
    sinkListen: '127.0.0.1:0',
    coordinatorListen: '127.0.0.1:0',
    insecure: false,
    stopGraceMs: 2_000,
  });
  const credentials = readCredentialsFile(cluster.credentials!.credentialsFile);
  const tokenOf = (identity: string) => credentials.find((credential) => credential.identity === identity)!.token;
  tokens = { 'worker-a': tokenOf('worker-a'), 'worker-b': tokenOf('worker-b'), admin: tokenOf('admin') };
});

afterAll(async () => {
  await Promise.allSettled(nemeses.map((nemesis) => nemesis.heal()));
  for (const close of closers) close();
  await cluster?.stop();
  dir.remove();
});

function tracked<T extends Nemesis>(nemesis: T): T {
  nemeses.push(nemesis);
  return nemesis;
}

/** Coordinator calls at `address` as `identity`. */
function coordinatorAs(identity: keyof typeof tokens | null, address = cluster.links.workersToCoordinator) {
  const client = coordinatorClient(address, CHANNEL);
  closers.push(() => client.close());
  return coordinatorApi(client, identity === null ? undefined : tokens[identity]);
}

/** Sink calls at `address` as `identity`, each with `timeoutMs`. */
function sinkAs(identity: keyof typeof tokens, address = cluster.links.workersToSink, timeoutMs = 2_000): SinkCalls {
  const calls = sinkCalls(address, tokens[identity], { timeoutMs, channel: CHANNEL });
  closers.push(calls.close);
  return calls;
}

const acquire = (owner: 'worker-a' | 'worker-b', resource: string, requestId = `${owner}-${resource}`) => ({
  request_id: requestId,
  resource,
  owner_id: owner,
  incarnation: '1',
  ttl_ms: TTL_MS,
});

const write = (resource: string, token: string, resultId: string) => ({
  resource,
  token,
  result_id: resultId,
  payload: Buffer.from(`payload of ${resultId}`),
});

/** The gRPC code a call ended with (OK is 0). */
async function codeOf(pending: Promise<unknown>): Promise<number> {
  try {
    await pending;
    return CODE.OK;
  } catch (error) {
    return remoteFailure(error as grpc.ServiceError).code;
  }
}

/** Resolves once the process is stopped (state T in /proc) or, with `expected` false, no longer is. */
async function untilStopped(pid: number, expected: boolean): Promise<void> {
  const isStopped = () => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may hold spaces: the state follows its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
  };
  // A signal is delivered when the process is next scheduled, not when kill() returns.
  await eventually(() => (isStopped() === expected ? true : undefined), {
    timeoutMs: 2_000,
    what: `pid ${pid} to be ${expected ? 'stopped' : 'running'}`,
  });
}

describe('process nemeses', () => {
  it('pause: a SIGSTOPped sink answers nothing until heal; any pid can be paused, a worker too', async () => {
    const sink = serviceProcess(cluster, 'sink');
    const direct = sinkAs('admin', cluster.sink.ready.address, 500);
    expect(await codeOf(direct.getFence('paused'))).toBe(CODE.OK);
    const nemesis = tracked(pause(sink));
    await nemesis.start();
    await untilStopped(sink.pid, true);
    expect(await codeOf(direct.getFence('paused'))).toBe(CODE.DEADLINE_EXCEEDED);

    expect(await nemesis.heal()).toMatchObject({
      name: 'pause',
      process: 'sink',
      detail: `SIGSTOP pid ${sink.pid}; SIGCONT`,
    });
    await untilStopped(sink.pid, false);
    expect(await codeOf(direct.getFence('paused'))).toBe(CODE.OK);

    const worker = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const paused = tracked(pause({ pid: worker.pid!, name: 'worker-a' }));
      await paused.start();
      await untilStopped(worker.pid!, true);
      await paused.heal();
      await untilStopped(worker.pid!, false);
    } finally {
      worker.kill('SIGKILL');
    }
  });

  it('S5: a sink SIGKILLed and restarted on its address still serves the acknowledged write', async () => {
    const resource = 'crashed-sink';
    const granted = ok(await coordinatorAs('worker-a').acquire(acquire('worker-a', resource)));
    const token = granted.lease!.token;
    const worker = sinkAs('worker-a');
    expect((await worker.write(write(resource, token, 'kept'))).outcome).toBe('APPLIED');
    const { pid: oldPid } = serviceProcess(cluster, 'sink');
    const address = cluster.sink.ready.address;

    const nemesis = tracked(crash(cluster, 'sink'));
    await nemesis.start();
    expect(isProcessAlive(oldPid)).toBe(false);
    expect(await codeOf(worker.read(resource, 'kept'))).toBe(CODE.UNAVAILABLE);

    const record = await nemesis.heal();
    expect(record).toMatchObject({ name: 'crash', process: 'sink' });
    expect(record!.detail).toMatch(
      new RegExp(`^SIGKILL pid ${oldPid}; restarted as pid \\d+ on ${address}, data kept$`),
    );
    expect(cluster.sink.child.pid).not.toBe(oldPid);
    expect(cluster.sink.ready.address).toBe(address);
    // Through the same proxy, which still points at the address the sink came back on.
    const read = await eventually(() => readOrMissing(worker, resource, 'kept').catch(() => undefined), {
      ...RESTARTED,
      what: 'the write to be readable through the restarted sink',
    });
    expect(read).toEqual({ token, payload: Buffer.from('payload of kept') });
    // A crash the cluster was told about is not a child dying on its own.
    expect(await hasSettled(cluster.childExited)).toBe(false);
  });

  it('L7: a coordinator SIGKILLed and restarted keeps its leases, its credentials and its way to the sink', async () => {
    const resource = 'crashed-coordinator';
    const workerA = coordinatorAs('worker-a');
    const workerB = coordinatorAs('worker-b');
    const held = ok(await workerA.acquire(acquire('worker-a', resource))).lease!;

    const nemesis = tracked(crash(cluster, 'coordinator'));
    await nemesis.start();
    expect(refused(await workerB.acquire(acquire('worker-b', resource))).code).toBe(CODE.UNAVAILABLE);

    expect(await nemesis.heal()).toMatchObject({ name: 'crash', process: 'coordinator' });
    const answer = await eventually(
      async () => {
        const result = await workerB.acquire(acquire('worker-b', resource));
        return !result.ok && result.failure.code === CODE.UNAVAILABLE ? undefined : result;
      },
      { ...RESTARTED, what: 'the restarted coordinator to answer' },
    );
    expect(refused(answer).reason).toBe('LEASE_HELD');
    expect(ok(await workerA.describe(resource)).lease).toMatchObject({ owner_id: 'worker-a', token: held.token });
    // Same flags: callers are still authenticated, and grants still advance the sink's fence.
    expect(refused(await coordinatorAs(null).describe(resource)).code).toBe(CODE.UNAUTHENTICATED);
    const other = await eventually(
      async () => {
        const result = await workerB.acquire(acquire('worker-b', `${resource}-other`));
        return result.ok ? result.value : undefined;
      },
      { ...RESTARTED, what: 'a grant that reaches the sink' },
    );
    expect(await sinkAs('worker-b').getFence(`${resource}-other`)).toMatchObject({ fence: other.lease!.token });
  });

  it('L6: a coordinator restarted with its data wiped grants above every token it forgot', async () => {
    const resource = 'wiped';
    const workerA = coordinatorAs('worker-a');
    const before = ok(await workerA.acquire(acquire('worker-a', resource))).lease!;

    const nemesis = tracked(crash(cluster, 'coordinator', { wipeData: true }));
    await nemesis.start();
    expect((await nemesis.heal())!.detail).toMatch(/data wiped$/);

    // The same request id is not replayed: its record went with the data.
    const after = await eventually(
      async () => {
        const result = await workerA.acquire(acquire('worker-a', resource));
        return result.ok ? result.value : undefined;
      },
      { ...RESTARTED, what: 'a grant from the wiped coordinator' },
    );
    expect(after.replayed).toBe(false);
    expect(BigInt(after.lease!.token)).toBeGreaterThan(BigInt(before.token));
    const stale = await writeOutcome(sinkAs('worker-a').write(write(resource, before.token, 'forgotten')));
    expect(stale).toEqual({ outcome: 'STALE_TOKEN', fence: after.lease!.token });
  });

  it('split brain: a rival coordinator grants over a live lease, and only the newer token writes', async () => {
    const resource = 'split';
    const held = ok(await coordinatorAs('worker-a').acquire(acquire('worker-a', resource))).lease!;

    const nemesis = tracked(splitBrain(cluster));
    await nemesis.start();
    const rival = nemesis.rival!;
    const rivalGrant = ok(
      await coordinatorAs('worker-b', rival.ready.address).acquire(acquire('worker-b', resource)),
    ).lease!;
    expect(BigInt(rivalGrant.token)).toBeGreaterThan(BigInt(held.token));
    // Two leases at once (the first coordinator knows nothing of the rival's)...
    expect(ok(await coordinatorAs('worker-a').describe(resource)).lease).toMatchObject({ owner_id: 'worker-a' });
    // ...and the fence decides: the older token is refused, the newer one writes (S3).
    const old = await writeOutcome(sinkAs('worker-a').write(write(resource, held.token, 'from-a')));
    expect(old).toEqual({ outcome: 'STALE_TOKEN', fence: rivalGrant.token });
    expect(await writeOutcome(sinkAs('worker-b').write(write(resource, rivalGrant.token, 'from-b')))).toEqual({
      outcome: 'APPLIED',
      fence: rivalGrant.token,
    });

    const record = await nemesis.heal();
    expect(record).toMatchObject({ name: 'split-brain', process: 'coordinator-2' });
    expect(nemesis.rival).toBeUndefined();
    expect(isProcessAlive(rival.child.pid!)).toBe(false);
    expect(refused(await coordinatorAs('worker-b', rival.ready.address).describe(resource)).code).toBe(
      CODE.UNAVAILABLE,
    );
  });

  it('split brain with redirect: callers of a redirected link reach the rival while it runs, then their own again', async () => {
    const resource = 'redirected';
    const held = ok(await coordinatorAs('worker-a').acquire(acquire('worker-a', resource))).lease!;
    // A worker's own proxy to the coordinator, as a scenario makes one.
    const toxiproxy = new Toxiproxy(cluster.toxiproxy.url);
    const own = cluster.coordinator.ready.address;
    const name = 'process_test_worker_b_to_coordinator';
    const created = await toxiproxy.populate([{ name, listen: '127.0.0.1:0', upstream: own, enabled: true }]);
    const viaProxy = created[name]!.listen;
    const link = { toxiproxy, proxy: name };
    const holderVia = async () => ok(await coordinatorAs('worker-b', viaProxy).describe(resource)).lease?.owner_id;
    expect(await holderVia()).toBe('worker-a');

    const nemesis = tracked(splitBrain(cluster, { name: 'coordinator-3', redirect: [link] }));
    await nemesis.start();
    const rival = nemesis.rival!;
    expect((await toxiproxy.get(name)).upstream).toBe(rival.ready.address);
    // The rival knows nothing of worker-a's lease: it grants worker-b, through the same proxy address.
    expect(await holderVia()).toBeUndefined();
    const rivalGrant = ok(await coordinatorAs('worker-b', viaProxy).acquire(acquire('worker-b', resource))).lease!;
    expect(BigInt(rivalGrant.token)).toBeGreaterThan(BigInt(held.token));
    expect(await holderVia()).toBe('worker-b');

    // A partition of the link while the rival runs: the heal sends it back and leaves it partitioned.
    const cut = tracked(partition(link));
    await cut.start();
    const record = await nemesis.heal();
    expect(record?.detail).toMatch(/process_test_worker_b_to_coordinator sent to it; links sent back; stopped/);
    expect(await toxiproxy.get(name)).toMatchObject({ upstream: own, enabled: false });
    await cut.heal();
    expect(await toxiproxy.get(name)).toMatchObject({ upstream: own, enabled: true });
    expect(await holderVia()).toBe('worker-a');
    await (await toxiproxy.get(name)).remove();
  });

  it('Cluster.restart stops a running service cleanly first, and brings it back on its address', async () => {
    const before = cluster.coordinator;
    const next = await cluster.restart('coordinator');
    expect(await before.exited).toEqual({ code: 0, signal: null });
    expect(next).toBe(cluster.coordinator);
    expect(next.ready.address).toBe(before.ready.address);
    expect(next.child.pid).not.toBe(before.child.pid);
    await eventually(async () => ((await coordinatorAs('worker-a').describe('restarted')).ok ? true : undefined), {
      ...RESTARTED,
      what: 'the restarted coordinator through its proxy',
    });
  });
});
