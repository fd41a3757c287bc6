// T3 on a real full disk: the coordinator's data dir on a 2 MiB tmpfs,
// filled while Acquires and Releases run. The first failed write stops the
// coordinator (exit 1, the cause logged); the calls it could not complete are
// UNAVAILABLE STORAGE_UNAVAILABLE, never INTERNAL; once the filler is
// deleted, the dir opens again without --repair and every acknowledged
// request id replays its own token (R1, S2). Before T3 the coordinator went
// on writing after the failed append and, once space was back, lost
// hundreds of acknowledged grants to a log LevelDB could no longer read.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  eventually,
  logEntries,
  mountTmpfs,
  startFencer,
  stopFencer,
  type FencerProcess,
  type Tmpfs,
} from '@fencer/testkit';
import { fresh, useSinkProcess } from './helpers.js';

const sink = useSinkProcess();
let disk: Tmpfs;
const children: FencerProcess[] = [];

beforeAll(() => {
  disk = mountTmpfs(2);
});

afterAll(async () => {
  await Promise.all(children.map((child) => stopFencer(child, 1_000)));
  disk.unmount();
});

function startCoordinator(dataDir: string): Promise<FencerProcess> {
  return startFencer([
    'coordinator',
    '--insecure',
    '--listen',
    '127.0.0.1:0',
    '--data',
    dataDir,
    '--sink',
    sink.address,
    '--max-acquires-per-second',
    '100000',
  ]).then((child) => {
    children.push(child);
    return child;
  });
}

interface Acknowledged {
  readonly request: { request_id: string; resource: string; owner_id: string; incarnation: string; ttl_ms: string };
  readonly token: string;
}

const WORKERS = 4;
const RESOURCES = 8;

describe('T3: a coordinator whose disk fills', () => {
  it('stops at the first failed write, answers STORAGE_UNAVAILABLE, and loses no acknowledged grant', async () => {
    const dataDir = join(disk.path, 'coordinator');
    const coordinator = await startCoordinator(dataDir);
    const client = coordinatorClient(coordinator.address);
    const api = coordinatorApi(client);
    const acknowledged: Acknowledged[] = [];
    const failures: { code: number; reason: string; message: string }[] = [];
    let filled = false;
    const exited = coordinator.exited.then((how) => how);
    let running = true;
    void exited.then(() => (running = false));

    // Each worker acquires and releases its own resources until the process is gone.
    const worker = async (w: number) => {
      for (let i = 0; running; i++) {
        const request = {
          request_id: fresh(`w${w}-${i}`),
          resource: `r${(w + i * WORKERS) % RESOURCES}`,
          owner_id: `worker-${w}`,
          incarnation: '1',
          ttl_ms: '60000',
        };
        const acquired = await api.acquire(request);
        if (!acquired.ok) {
          failures.push(acquired.failure);
          if (filled) return;
          continue;
        }
        acknowledged.push({ request, token: acquired.value.lease!.token });
        const { resource, owner_id, incarnation } = request;
        const released = await api.release({ resource, owner_id, incarnation, token: acquired.value.lease!.token });
        if (!released.ok) {
          failures.push(released.failure);
          if (filled) return;
        }
      }
    };
    const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
    // Fill the disk once the coordinator has granted a while; free it again
    // at the first refusal, while the coordinator may still be running.
    await eventually(() => (acknowledged.length >= 200 ? true : undefined), { what: '200 grants' });
    expect(disk.fill()).toBeGreaterThan(0);
    filled = true;
    await eventually(() => (failures.length > 0 ? true : undefined), { what: 'a refused call' });
    disk.free();
    const { code } = await Promise.race([
      exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the coordinator went on after a failed write')), 15_000),
      ),
    ]);
    await Promise.all(workers);
    client.close();

    expect(code).toBe(1);
    const fatal = logEntries(coordinator.stderr()).filter((entry) => entry.level === 60);
    expect(fatal).toHaveLength(1);
    expect(String(fatal[0]!.msg)).toMatch(/coordinator storage failed: .*(No space left|ENOSPC)/i);
    // The calls that met the failure were told so; one sent just after found
    // no coordinator listening. None was INTERNAL or cut off by a reset.
    expect(failures.filter((f) => f.reason === 'STORAGE_UNAVAILABLE').length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure.code, failure.message).toBe(CODE.UNAVAILABLE);
      if (failure.reason !== 'STORAGE_UNAVAILABLE')
        expect(failure.message).toMatch(/ECONNREFUSED|No connection established/);
    }

    // The dir opens without --repair, and every acknowledged request id replays its token.
    const restarted = await startCoordinator(dataDir);
    const again = coordinatorClient(restarted.address);
    const replay = coordinatorApi(again);
    try {
      const lastTokens = new Map<string, bigint>();
      for (const { request, token } of acknowledged) {
        const answer = await replay.acquire(request);
        expect(answer.ok && answer.value.replayed, JSON.stringify(answer)).toBe(true);
        if (answer.ok) expect(answer.value.lease!.token).toBe(token);
        const last = lastTokens.get(request.resource) ?? 0n;
        if (BigInt(token) > last) lastTokens.set(request.resource, BigInt(token));
      }
      for (const [resource, last] of lastTokens) {
        const described = await replay.describe(resource);
        expect(described.ok && BigInt(described.value.last_token)).toBeGreaterThanOrEqual(last);
      }
    } finally {
      again.close();
      await stopFencer(restarted);
    }
  });
});
