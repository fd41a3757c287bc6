// A4's admin actions across real processes: `fencer inspect` and `fencer
// release --force` against a `fencer sink` and a `fencer coordinator` run
// with credentials, while a worker holds and uses a lease.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CODE,
  call,
  coordinatorApi,
  coordinatorClient,
  ok,
  refused,
  runFencer,
  sinkApi,
  sinkClient,
  startScriptedCoordinator,
  startSecuredCoordinator,
  startSecuredSink,
  stopFencer,
  tempDir,
  writeTestCredentials,
  type FencerProcess,
  type ScriptedCoordinator,
} from '@fencer/testkit';

const TOKENS = {
  coordinator: 'coordinator-token-admin-0123456789',
  root: 'root-token-admin-0123456789',
  'worker-a': 'worker-a-token-admin-0123456789',
} as const;

const dir = tempDir('fencer-admin-');
const credentials = writeTestCredentials(dir.path, TOKENS, { root: 'admin' });
let sink: FencerProcess;
let coordinator: FencerProcess;
const clients: { close(): unknown }[] = [];

beforeAll(async () => {
  sink = await startSecuredSink(credentials, join(dir.path, 'sink'));
  coordinator = await startSecuredCoordinator(credentials, join(dir.path, 'coordinator'), sink.address);
});

afterAll(async () => {
  for (const client of clients) await client.close();
  if (coordinator) await stopFencer(coordinator);
  if (sink) await stopFencer(sink);
  dir.remove();
});

let requests = 0;
/** Worker-a's view: acquire, write, describe, over its own connections. */
function workerA() {
  const leases = coordinatorClient(coordinator.address);
  const writes = sinkClient(sink.address);
  clients.push(leases, writes);
  const lease = coordinatorApi(leases, TOKENS['worker-a']);
  return {
    leases,
    writes,
    acquire: async (resource: string) =>
      ok(
        await lease.acquire({
          request_id: `admin-test-${++requests}`,
          resource,
          owner_id: 'worker-a',
          incarnation: '1',
          ttl_ms: '60000',
        }),
      ).lease!,
    describe: async (resource: string) => ok(await lease.describe(resource)),
    sink: sinkApi(writes, TOKENS['worker-a']),
  };
}

/** `fencer <command> RESOURCE` as the admin (or `as`), with --json; `coordinators` default: the one coordinator. */
async function admin(
  command: 'inspect' | 'release',
  resource: string,
  extra: string[] = [],
  as: keyof typeof TOKENS = 'root',
  coordinators = coordinator.address,
) {
  const args = [
    command,
    resource,
    '--coordinator',
    coordinators,
    '--token-file',
    credentials.tokenFile(as),
    '--json',
    ...extra,
  ];
  if (command === 'inspect') args.push('--sink', sink.address);
  if (command === 'release') args.push('--force');
  return runFencer(args);
}

/** A successful admin run's JSON output. */
function json(result: { code: number | null; stdout: string; stderr: string }): Record<string, any> {
  expect(result, result.stderr).toMatchObject({ code: 0 });
  return JSON.parse(result.stdout) as Record<string, any>;
}

describe('fencer release --force (A4)', () => {
  it('fences the holder off before answering: its writes are STALE_TOKEN, the lease is gone, the next token is larger', async () => {
    const worker = workerA();
    const resource = 'forced';
    const lease = await worker.acquire(resource);
    ok(await worker.sink.write(resource, lease.token, 'step-1', 'before'));

    const forced = json(await admin('release', resource));
    expect(forced).toMatchObject({ resource, token: lease.token, forced: true, last_token: lease.token });
    expect(BigInt(forced.fence)).toBeGreaterThan(BigInt(lease.token));

    const stale = refused(await worker.sink.write(resource, lease.token, 'step-2', 'too late'));
    expect([stale.code, stale.reason, stale.metadata.fence]).toEqual([
      CODE.FAILED_PRECONDITION,
      'STALE_TOKEN',
      forced.fence,
    ]);
    expect((await worker.describe(resource)).lease).toBeNull();
    // A5: the forced fence belongs to no worker, so knowing its number is no use either.
    const guessed = refused(await worker.sink.write(resource, forced.fence, 'step-2', 'guessed'));
    expect([guessed.code, guessed.reason]).toEqual([CODE.PERMISSION_DENIED, 'OWNER_MISMATCH']);

    const next = await worker.acquire(resource);
    expect(BigInt(next.token)).toBeGreaterThan(BigInt(forced.fence));
    // Rerunning the command (a lost answer) names the old grant: it changes nothing for the new holder.
    const again = json(await admin('release', resource, ['--token', lease.token]));
    expect(again).toMatchObject({ forced: false, last_token: next.token });
    ok(await worker.sink.write(resource, next.token, 'step-2', 'new holder'));
  });

  it('is PERMISSION_DENIED to a worker, over gRPC and through the CLI (one line, exit 1)', async () => {
    const worker = workerA();
    const resource = 'not-yours';
    const lease = await worker.acquire(resource);
    const denied = refused(
      await call(worker.leases, worker.leases.ForceRelease, { resource, token: lease.token }, TOKENS['worker-a']),
    );
    expect(denied.code).toBe(CODE.PERMISSION_DENIED);
    const listing = refused(
      await call(worker.writes, worker.writes.ListResults, { resource, limit: 1 }, TOKENS['worker-a']),
    );
    expect(listing.code).toBe(CODE.PERMISSION_DENIED);

    const result = await admin('release', resource, [], 'worker-a');
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^fencer release: .*PERMISSION_DENIED/)]);
    expect((await worker.describe(resource)).lease?.token).toBe(lease.token);
  });
});

describe('fencer inspect (A4)', () => {
  it("shows the lease, the next token, the sink's fence with its owner and the latest results", async () => {
    const worker = workerA();
    const resource = 'inspected';
    const lease = await worker.acquire(resource);
    ok(await worker.sink.write(resource, lease.token, 'step-1', 'abc'));
    ok(await worker.sink.write(resource, lease.token, 'step-2', 'abcdef'));

    const inspection = json(await admin('inspect', resource));
    expect(inspection).toEqual({
      resource,
      coordinator: {
        lease: {
          owner_id: 'worker-a',
          incarnation: '1',
          token: lease.token,
          ttl_ms: '60000',
          remaining_ms: expect.stringMatching(/^\d+$/),
        },
        last_token: lease.token,
        next_token: String(BigInt(lease.token) + 1n),
      },
      sink: {
        address: sink.address,
        name: 'default',
        fence: lease.token,
        fence_owner_id: 'worker-a',
        results: [
          { result_id: 'step-1', token: lease.token, size_bytes: '3' },
          { result_id: 'step-2', token: lease.token, size_bytes: '6' },
        ],
      },
    });
    expect(Number(inspection.coordinator.lease.remaining_ms)).toBeGreaterThan(0);
    expect(json(await admin('inspect', resource, ['--limit', '1'])).sink.results).toHaveLength(1);

    const text = await runFencer([
      'inspect',
      resource,
      '--coordinator',
      coordinator.address,
      '--sink',
      sink.address,
      '--token-file',
      credentials.tokenFile('root'),
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('held by "worker-a"');
    expect(text.stdout).toContain(`sink fence   ${lease.token}, bound to "worker-a"`);
  });
});

// The replicas here are stand-ins (startScriptedCoordinator: real grpc-js
// servers on real sockets answering as each test scripts), because the
// replicas of services/coordinator are built apart; the leader they name is
// the real coordinator above, which is not in the list: only following
// NOT_LEADER reaches it.
describe('admin commands over coordinator replicas (H7)', () => {
  async function standIn(script: ScriptedCoordinator['script']) {
    const replica = await startScriptedCoordinator(script);
    clients.push(replica);
    return replica;
  }

  it('inspect and release --force go past an unreachable replica and follow NOT_LEADER to the leader', async () => {
    const worker = workerA();
    const resource = 'replicated';
    const lease = await worker.acquire(resource);
    const electing = await standIn(() => ({ notLeader: null }));
    const standby = await standIn(() => ({ notLeader: coordinator.address }));
    const replicas = `127.0.0.1:1,${electing.address},${standby.address}`;

    const inspection = json(await admin('inspect', resource, [], 'root', replicas));
    expect(inspection.coordinator.lease).toMatchObject({ owner_id: 'worker-a', token: lease.token });
    const forced = json(await admin('release', resource, [], 'root', replicas));
    expect(forced).toMatchObject({ resource, token: lease.token, forced: true });
    // Each command's first call asked each stand-in once; release's ForceRelease then went straight to the leader.
    for (const replica of [electing, standby])
      expect(replica.calls.map((call) => call.method)).toEqual(['Describe', 'Describe']);
    expect((await worker.describe(resource)).lease).toBeNull();
  });

  it('no replica leading: one line naming the last replica asked and NOT_LEADER, exit 1', async () => {
    const a = await standIn(() => ({ notLeader: null }));
    const b = await standIn(() => ({ notLeader: null }));
    const result = await admin('release', 'leaderless', [], 'root', `${a.address},${b.address}`);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(`^fencer release: ${b.address.replace(/\./g, '\\.')}: UNAVAILABLE NOT_LEADER: `),
      ),
    ]);
  });

  it.each([
    ['127.0.0.1:1,', 'address 2 of "127.0.0.1:1," is empty'],
    ['127.0.0.1:1,127.0.0.1:1', '"127.0.0.1:1" is listed twice'],
    ['127.0.0.1', 'address 1 of "127.0.0.1": expected HOST:PORT'],
  ])('refuses --coordinator %j with one line naming the entry', async (list, message) => {
    for (const command of ['inspect', 'release']) {
      const result = await runFencer([command, 'r', '--coordinator', list, '--insecure']);
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(message)]);
    }
  });
});

describe('admin commands, misused', () => {
  it.each([
    ['a missing resource', ['inspect', '--coordinator', '127.0.0.1:1', '--sink', '127.0.0.1:1', '--insecure']],
    ['an unknown flag', ['release', 'r', '--force', '--coordinator', '127.0.0.1:1', '--insecure', '--bogus']],
    ['release without --force', ['release', 'r', '--coordinator', '127.0.0.1:1', '--insecure']],
    ['no credential', ['inspect', 'r', '--coordinator', '127.0.0.1:1', '--sink', '127.0.0.1:1']],
    ['a bad --token', ['release', 'r', '--force', '--coordinator', '127.0.0.1:1', '--insecure', '--token', '-1']],
    [
      'a limit past 1000',
      ['inspect', 'r', '--coordinator', '127.0.0.1:1', '--sink', '127.0.0.1:1', '--insecure', '--limit', '1001'],
    ],
  ])('%s is one line and a non-zero exit', async (_what, args) => {
    const result = await runFencer(args);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: /)]);
  });

  it('an unreachable coordinator is one line naming it, and exit 1', async () => {
    const result = await runFencer([
      'release',
      'r',
      '--force',
      '--coordinator',
      '127.0.0.1:1',
      '--insecure',
      '--timeout-ms',
      '500',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^fencer release: 127\.0\.0\.1:1: (UNAVAILABLE|DEADLINE_EXCEEDED)/),
    ]);
  });
});
