// A1–A4 at both hops: coordinator → sink with the coordinator's bearer token
// (--sink-token-file), and callers → coordinator with their own credentials.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  stopFencer,
  tempDir,
  type FencerProcess,
  CODE,
  coordinatorApi,
  coordinatorClient,
  ok,
  refused,
  sinkApi,
  sinkClient,
} from '@fencer/testkit';
import { fresh, startSinkProcess, startTestCoordinator, writeCredentials } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let creds: ReturnType<typeof writeCredentials>;
let sinkProcess: FencerProcess;

beforeAll(async () => {
  dir = tempDir();
  creds = writeCredentials(dir.path);
  sinkProcess = await startSinkProcess(join(dir.path, 'sink'), { credentials: creds.file });
});

afterAll(async () => {
  await stopFencer(sinkProcess);
  dir.remove();
});

function tokenFile(token: string): string {
  const path = join(dir.path, fresh('token'));
  writeFileSync(path, `\n  ${token}  \n`); // surrounding whitespace is ignored
  return path;
}

async function withCoordinator(
  sinkToken: string,
  body: (client: ReturnType<typeof coordinatorClient>) => Promise<void>,
) {
  const started = await startTestCoordinator(sinkProcess.address, {
    credentials: creds.file,
    sinkTokenFile: tokenFile(sinkToken),
  });
  const client = coordinatorClient(started.coordinator.address);
  try {
    await body(client);
  } finally {
    client.close();
    await started.coordinator.stop();
    started.remove();
  }
}

const acquireReq = (resource: string, owner: string) => ({
  request_id: fresh('req'),
  resource,
  owner_id: owner,
  incarnation: '1',
  ttl_ms: '60000',
});

describe('A1: coordinator → sink', () => {
  it('with the coordinator credential in --sink-token-file, Acquire advances the fence', () =>
    withCoordinator(creds.tokens.coordinator, async (client) => {
      const resource = fresh('auth-ok');
      const lease = ok(await coordinatorApi(client, creds.tokens.alice).acquire(acquireReq(resource, 'alice'))).lease!;
      expect(await sinkApi(sinkClient(sinkProcess.address), creds.tokens.alice).fence(resource)).toBe(lease.token);
    }));

  it.each([
    ['a worker token', () => creds.tokens.alice, 'PERMISSION_DENIED'],
    ['an unknown token', () => 'not-a-known-token-0123456789', 'UNAUTHENTICATED'],
  ])(
    'with %s in the file, Acquire is SINK_UNAVAILABLE naming the sink code, and nothing is granted',
    (_name, token, sinkCode) =>
      withCoordinator(token(), async (client) => {
        const resource = fresh('auth-refused');
        const api = coordinatorApi(client, creds.tokens.alice);
        const failure = refused(await api.acquire(acquireReq(resource, 'alice')));
        expect([failure.code, failure.reason, failure.metadata.sink_code]).toEqual([
          CODE.UNAVAILABLE,
          'SINK_UNAVAILABLE',
          sinkCode,
        ]);
        expect(ok(await api.describe(resource))).toMatchObject({ lease: null, last_token: '0' });
        expect(await sinkApi(sinkClient(sinkProcess.address), creds.tokens.alice).fence(resource)).toBe('0');
      }),
  );
});

describe("A2–A4: the coordinator's own server", () => {
  it('a call without a token is UNAUTHENTICATED; an unknown token too', () =>
    withCoordinator(creds.tokens.coordinator, async (client) => {
      for (const token of [undefined, 'unknown-token-0123456789abc']) {
        const failure = refused(await coordinatorApi(client, token).acquire(acquireReq(fresh('r'), 'alice')));
        expect(failure.code).toBe(CODE.UNAUTHENTICATED);
        expect(refused(await coordinatorApi(client, token).describe('r')).code).toBe(CODE.UNAUTHENTICATED);
      }
    }));

  it('A4: workers call everything; an admin only Describe; the coordinator role nothing (PERMISSION_DENIED, whatever the request)', () =>
    withCoordinator(creds.tokens.coordinator, async (client) => {
      const callers = [
        ['worker', creds.tokens.alice, 'alice'],
        ['admin', creds.tokens.ops, 'ops'],
        ['coordinator', creds.tokens.coordinator, 'coordinator'],
      ] as const;
      const seen: Record<string, Record<string, boolean>> = {};
      for (const [role, token, identity] of callers) {
        const api = coordinatorApi(client, token);
        const resource = fresh('a4');
        const holder = { resource, owner_id: identity, incarnation: '1', token: '1' };
        const results = {
          Acquire: await api.acquire(acquireReq(resource, identity)),
          Renew: await api.renew({ ...holder, ttl_ms: '0' }),
          Release: await api.release(holder),
          Describe: await api.describe(resource),
        };
        seen[role] = Object.fromEntries(
          Object.entries(results).map(([method, result]) => [
            method,
            result.ok || result.failure.code !== CODE.PERMISSION_DENIED,
          ]),
        );
      }
      expect(seen).toEqual({
        worker: { Acquire: true, Renew: true, Release: true, Describe: true },
        admin: { Acquire: false, Renew: false, Release: false, Describe: true },
        coordinator: { Acquire: false, Renew: false, Release: false, Describe: false },
      });
    }));

  it('A3: a worker cannot acquire, renew or release as another owner_id (OWNER_MISMATCH)', () =>
    withCoordinator(creds.tokens.coordinator, async (client) => {
      const resource = fresh('owner');
      const alice = coordinatorApi(client, creds.tokens.alice);
      const bob = coordinatorApi(client, creds.tokens.bob);
      const mismatch = refused(await bob.acquire(acquireReq(resource, 'alice')));
      expect([mismatch.code, mismatch.reason]).toEqual([CODE.PERMISSION_DENIED, 'OWNER_MISMATCH']);
      expect(ok(await alice.describe(resource)).lease).toBeNull();

      const lease = ok(await alice.acquire(acquireReq(resource, 'alice'))).lease!;
      const hers = { resource, owner_id: 'alice', incarnation: '1', token: lease.token };
      expect(refused(await bob.renew({ ...hers, ttl_ms: '0' })).reason).toBe('OWNER_MISMATCH');
      expect(refused(await bob.release(hers)).reason).toBe('OWNER_MISMATCH');
      // Under his own name with her token he is simply not the holder.
      expect(refused(await bob.renew({ ...hers, owner_id: 'bob', ttl_ms: '0' })).reason).toBe('NOT_LEASE_HOLDER');
      expect(ok(await bob.release({ ...hers, owner_id: 'bob' })).released).toBe(false);
      expect(ok(await alice.describe(resource)).lease).toMatchObject({ owner_id: 'alice', token: lease.token });
      expect(ok(await alice.release(hers)).released).toBe(true);
    }));
});
