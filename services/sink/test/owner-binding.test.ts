// A5 across real processes: a `fencer coordinator` grants leases and binds
// each fence to its holder at a `fencer sink`, both with credentials; a
// worker holding another's token still cannot write under it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CODE,
  coordinatorApi,
  coordinatorClient,
  ok,
  refused,
  sinkApi,
  sinkClient,
  startSecuredCoordinator,
  startSecuredSink,
  stopFencer,
  tempDir,
  writeTestCredentials,
  type FencerProcess,
} from '@fencer/testkit';

const TOKENS = {
  coordinator: 'coordinator-token-a5-0123456789',
  'worker-a': 'worker-a-token-a5-0123456789',
  'worker-b': 'worker-b-token-a5-0123456789',
} as const;
type Identity = Exclude<keyof typeof TOKENS, 'coordinator'>;

let dir: ReturnType<typeof tempDir>;
let sink: FencerProcess;
let coordinator: FencerProcess;
const clients: { close(): void }[] = [];

beforeAll(async () => {
  dir = tempDir('fencer-a5-');
  const credentials = writeTestCredentials(dir.path, TOKENS);
  sink = await startSecuredSink(credentials, join(dir.path, 'sink'));
  coordinator = await startSecuredCoordinator(credentials, join(dir.path, 'coordinator'), sink.address);
});

afterAll(async () => {
  for (const client of clients) client.close();
  if (coordinator) await stopFencer(coordinator);
  if (sink) await stopFencer(sink);
  dir?.remove();
});

/** The coordinator and sink as worker `identity` sees them. */
function as(identity: Identity) {
  const leases = coordinatorClient(coordinator.address);
  const writes = sinkClient(sink.address);
  clients.push(leases, writes);
  const lease = coordinatorApi(leases, TOKENS[identity]);
  return {
    acquire: async (resource: string) =>
      ok(
        await lease.acquire({
          request_id: `${identity}-${resource}`,
          resource,
          owner_id: identity,
          incarnation: '1',
          ttl_ms: '60000',
        }),
      ).lease!.token,
    release: async (resource: string, token: string) =>
      ok(await lease.release({ resource, owner_id: identity, incarnation: '1', token })).released,
    write: (resource: string, token: string, resultId: string) =>
      sinkApi(writes, TOKENS[identity]).write(resource, token, resultId, `${identity} wrote ${resultId}`),
  };
}

describe('A5: a token is not a capability (real coordinator and sink)', () => {
  it("worker-b writing under worker-a's token is OWNER_MISMATCH; worker-a's own write is APPLIED", async () => {
    const a = as('worker-a');
    const b = as('worker-b');
    const token = await a.acquire('job-1');

    const stolen = refused(await b.write('job-1', token, 'step-1'));
    expect([stolen.code, stolen.reason, stolen.metadata.fence]).toEqual([
      CODE.PERMISSION_DENIED,
      'OWNER_MISMATCH',
      token,
    ]);
    expect(ok(await a.write('job-1', token, 'step-1')).outcome).toBe('APPLIED');
    // The refusal stored nothing: worker-a's payload is the one kept.
    expect(ok(await a.write('job-1', token, 'step-1')).outcome).toBe('REPLAYED');
  });

  it('the token check comes first: a stale token from the wrong identity is STALE_TOKEN, not OWNER_MISMATCH', async () => {
    const a = as('worker-a');
    const b = as('worker-b');
    const old = await a.acquire('job-2');
    expect(await a.release('job-2', old)).toBe(true);
    const current = await b.acquire('job-2'); // the fence now belongs to worker-b

    for (const [writer, token, reason] of [
      [a, old, 'STALE_TOKEN'], // stale, and not the fence's owner
      [b, old, 'STALE_TOKEN'], // stale, and another's token
      [a, current, 'OWNER_MISMATCH'], // the current token, but not its owner
    ] as const) {
      const failure = refused(await writer.write('job-2', token, 'step-1'));
      expect([failure.reason, failure.metadata.fence]).toEqual([reason, current]);
    }
    expect(ok(await b.write('job-2', current, 'step-1')).outcome).toBe('APPLIED');
  });
});
