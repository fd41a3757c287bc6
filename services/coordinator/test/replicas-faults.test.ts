// Coordinator replicas when etcd or the deployment is wrong (H6, H1, L3):
// etcd gone and back, a replica started while etcd refuses connections, a
// prefix of another format or an etcd that refuses the replica's calls, and one coordinator on LevelDB beside one on etcd at one sink.
// Real `fencer` children, a real etcd and a real sink.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  eventually,
  logEntries,
  ok,
  refused,
  runFencer,
  startFencer,
  stopFencer,
  tempDir,
} from '@fencer/testkit';
import { acquireRequest, freshPrefix, leaderOf, replicaArgs, useReplicaRig } from './replica-helpers.js';

const rig = useReplicaRig();
const sink = rig.sink;

describe('H6: etcd unreachable', () => {
  it('the leader stops serving when its leader lease runs out, nothing is granted without etcd, and service resumes by itself with nothing acknowledged lost', async () => {
    const replicas = await rig.start(2);
    const leader = await leaderOf(replicas);
    const kept = `h6-kept-${Date.now()}`;
    const grant = ok(await leader.api.acquire(acquireRequest(kept, 'alice'))).lease!;

    const member = rig.etcd.cluster.members[0]!;
    await member.kill('SIGKILL');
    try {
      // It learns nothing from etcd now: its own leader lease ends its leadership.
      await eventually(
        () =>
          logEntries(leader.process.stderr()).find(
            (entry) => entry.msg === 'no longer the leader (H2)' && entry.reason === 'leader-lease-expired',
          ),
        { what: 'the leader deposing itself at its leader lease', timeoutMs: 20_000 },
      );
      for (const replica of replicas) {
        expect(await replica.serving()).toBe(false);
        const refusal = refused(await replica.api.acquire(acquireRequest(`h6-new-${Date.now()}`, 'bob')));
        expect([refusal.code, refusal.reason]).toEqual([CODE.UNAVAILABLE, 'NOT_LEADER']);
      }
    } finally {
      await member.restart();
    }

    const next = await leaderOf(replicas, 60_000);
    // The grant made before the outage is still there, still valid (L7), with its token.
    const described = ok(await next.api.describe(kept));
    expect(described.lease).toMatchObject({ owner_id: 'alice', token: grant.token });
    expect(refused(await next.api.acquire(acquireRequest(kept, 'bob'))).reason).toBe('LEASE_HELD');
    expect(ok(await next.api.acquire(acquireRequest(`h6-after-${Date.now()}`, 'bob'))).lease!.token).toBe('1');
    // Neither replica exited over it.
    for (const replica of replicas) expect(replica.process.child.exitCode).toBeNull();
  });
});

describe('H1: a replica that cannot use its etcd prefix does not start', () => {
  it('a prefix holding another format, or an etcd that refuses it: exit 1 with one line', async () => {
    const prefix = freshPrefix();
    const client = new Etcd3({ hosts: rig.etcd.hosts });
    try {
      await client.put(`${prefix}format`).value('someone-else/7');
    } finally {
      client.close();
    }
    const foreign = await runFencer(replicaArgs({ etcd: rig.etcd.endpoint, sink: sink.address, prefix }));
    expect(foreign.code).toBe(1);
    expect(foreign.stderr.trim().split('\n')).toHaveLength(1);
    expect(foreign.stderr).toMatch(/^fencer coordinator: .*someone-else\/7/);

    // A gRPC server that is not etcd: the sink refuses etcd's calls (UNIMPLEMENTED).
    const refusing = await runFencer(replicaArgs({ etcd: sink.address, sink: sink.address, prefix: freshPrefix() }));
    expect(refusing.code).toBe(1);
    expect(refusing.stderr.trim().split('\n')).toHaveLength(1);
    expect(refusing.stderr).toMatch(new RegExp(`^fencer coordinator: etcd at ${sink.address} `));
  });
});

/**
 * A forwarder to the rig's etcd on a port of its own that, until opened,
 * either refuses connections (not listening) or holds them unanswered (an
 * etcd cut off without a refusal, or without a quorum).
 */
async function gatedEtcd(until: 'refused' | 'held') {
  const etcdPort = Number(rig.etcd.endpoint.split(':')[1]);
  let open = false;
  const held = new Set<Socket>();
  const forward = createServer((socket) => {
    if (!open) {
      held.add(socket);
      socket.on('error', () => held.delete(socket));
      return;
    }
    const upstream = connect(etcdPort, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => forward.listen(0, '127.0.0.1', resolve));
  const { port } = forward.address() as AddressInfo;
  if (until === 'refused') await new Promise((resolve) => forward.close(resolve));
  return {
    endpoint: `127.0.0.1:${port}`,
    open: async () => {
      open = true;
      for (const socket of held) socket.destroy();
      if (until === 'refused') await new Promise<void>((resolve) => forward.listen(port, '127.0.0.1', resolve));
    },
    close: () => forward.close(),
  };
}

describe('H6: a replica started while etcd is out of reach', () => {
  it.each(['refused', 'held'] as const)(
    'connections %s: it asks again, and leads once etcd answers, within --etcd-wait-ms',
    async (until) => {
      const etcd = await gatedEtcd(until);
      const starting = startFencer([
        ...replicaArgs({ etcd: etcd.endpoint, sink: sink.address, prefix: freshPrefix() }),
        '--etcd-wait-ms',
        '20000',
      ]);
      let started: Awaited<typeof starting> | undefined;
      try {
        // The fault's length, not a wait for an event: etcd stays out of
        // reach this long, longer than one try (a leader TTL) when held.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        await etcd.open();
        started = await starting;
        const client = coordinatorClient(started.address);
        try {
          const api = coordinatorApi(client);
          // It campaigns once started; until it leads it answers NOT_LEADER.
          const request = acquireRequest(`job-late-etcd-${until}`, 'worker-a');
          const granted = await eventually(async () => {
            const result = await api.acquire(request);
            return result.ok ? result.value : undefined;
          });
          expect(granted.lease?.token).toBe('1');
        } finally {
          client.close();
        }
      } finally {
        if (started) await stopFencer(started);
        etcd.close();
      }
    },
  );

  it('past --etcd-wait-ms it exits 1 with one line naming etcd', async () => {
    const etcd = await gatedEtcd('held');
    try {
      const run = await runFencer([
        ...replicaArgs({ etcd: etcd.endpoint, sink: sink.address, prefix: freshPrefix() }),
        '--etcd-wait-ms',
        '2500',
      ]);
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(new RegExp(`^fencer coordinator: etcd at ${etcd.endpoint} .*did not answer`));
    } finally {
      etcd.close();
    }
  });
});

describe('L3: one coordinator on LevelDB, one replica on etcd, one sink', () => {
  it('every grant gets a distinct, increasing token; the fence follows the newest grant and the older holder is STALE_TOKEN', async () => {
    const dir = tempDir('fencer-mixed-');
    const level = await startFencer([
      'coordinator',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--sink',
      sink.address,
      '--data',
      dir.path,
    ]);
    const levelClient = coordinatorClient(level.address);
    try {
      const [replica] = await rig.start(1);
      await leaderOf([replica!]);
      const sides = [coordinatorApi(levelClient), replica!.api];
      const resource = `l3-mixed-${Date.now()}`;
      const granted: { side: number; owner: string; token: string }[] = [];
      for (let round = 0; round < 4; round += 1) {
        const side = round % 2;
        const owner = `worker-${round}`;
        // Each side knows only its own grants: the other side's lease is no obstacle to it.
        const previous = granted.filter((grant) => grant.side === side).at(-1);
        if (previous)
          ok(
            await sides[side]!.release({
              resource,
              owner_id: previous.owner,
              incarnation: '1',
              token: previous.token,
            }),
          );
        const lease = ok(await sides[side]!.acquire(acquireRequest(resource, owner))).lease!;
        granted.push({ side, owner, token: lease.token });
        expect(await sink.fence(resource)).toBe(lease.token);
        expect(ok(await sink.write(resource, lease.token, `result-${round}`, owner)).outcome).toBe('APPLIED');
        if (round > 0) {
          const older = granted[round - 1]!;
          const stale = refused(await sink.write(resource, older.token, `late-${round}`, older.owner));
          expect([stale.code, stale.reason]).toEqual([CODE.FAILED_PRECONDITION, 'STALE_TOKEN']);
        }
      }
      const tokens = granted.map((grant) => BigInt(grant.token));
      expect(new Set(tokens).size).toBe(tokens.length);
      expect([...tokens].sort((x, y) => (x < y ? -1 : 1))).toEqual(tokens);
    } finally {
      levelClient.close();
      await stopFencer(level);
      dir.remove();
    }
  });
});
