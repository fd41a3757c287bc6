// V1/V2: bad input for every field of every RPC is INVALID_ARGUMENT naming the
// field (BadRequest), and changes nothing — neither the coordinator's state
// nor the sink's fence.
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
import type { FakeClock } from '@fencer/common';
import { fresh, startSinkProcess, startTestCoordinator } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let sinkProcess: FencerProcess;
let started: Awaited<ReturnType<typeof startTestCoordinator>>;
let api: ReturnType<typeof coordinatorApi>;
let client: ReturnType<typeof coordinatorClient>;
let clock: FakeClock;
let sink: ReturnType<typeof sinkApi>;
const HELD = fresh('held');
const FREE = fresh('free');
let holder: { resource: string; owner_id: string; incarnation: string; token: string };

beforeAll(async () => {
  dir = tempDir();
  sinkProcess = await startSinkProcess(dir.path);
  sink = sinkApi(sinkClient(sinkProcess.address));
  started = await startTestCoordinator(sinkProcess.address);
  clock = started.clock;
  client = coordinatorClient(started.coordinator.address);
  api = coordinatorApi(client);
  const lease = ok(
    await api.acquire({
      request_id: fresh('req'),
      resource: HELD,
      owner_id: 'alice',
      incarnation: '1',
      ttl_ms: '1000',
    }),
  ).lease!;
  holder = { resource: HELD, owner_id: 'alice', incarnation: '1', token: lease.token };
  clock.advance(300); // a renew would now show remaining 1000 again, so one slipping through is visible
});

afterAll(async () => {
  client.close();
  await started.coordinator.stop();
  started.remove();
  await stopFencer(sinkProcess);
  dir.remove();
});

const BAD_IDS: [string, string][] = [
  ['empty', ''],
  ['513 bytes', 'x'.repeat(513)],
  ['a control character', 'a\u0007b'],
  ['a bidi override (Cf)', 'a\u202Eb'],
  ['a line separator (Zl)', 'a\u2028b'],
  ['a single space', ' '],
  ['a trailing space', 'a '],
  ['a noncharacter (U+FFFE)', 'a\uFFFEb'],
];
const idCases = (field: string) => BAD_IDS.map(([what, value]) => [field, what, value] as const);

type Case = readonly [field: string, what: string, value: string];

const ACQUIRE: Case[] = [
  ...idCases('request_id'),
  ...idCases('resource'),
  ...idCases('owner_id'),
  ['incarnation', 'zero', '0'],
  ['ttl_ms', 'zero', '0'],
  ['ttl_ms', 'below 100', '99'],
  ['ttl_ms', 'above one day', '86400001'],
];
const RENEW: Case[] = [
  ...idCases('resource'),
  ...idCases('owner_id'),
  ['incarnation', 'zero', '0'],
  ['token', 'zero', '0'],
  ['ttl_ms', 'below 100', '99'],
  ['ttl_ms', 'above one day', '86400001'],
];
const RELEASE: Case[] = [
  ...idCases('resource'),
  ...idCases('owner_id'),
  ['incarnation', 'zero', '0'],
  ['token', 'zero', '0'],
];
const DESCRIBE: Case[] = idCases('resource');

async function snapshot() {
  return {
    held: ok(await api.describe(HELD)),
    free: ok(await api.describe(FREE)),
    heldFence: await sink.fence(HELD),
    freeFence: await sink.fence(FREE),
  };
}

async function expectInvalid(result: Awaited<ReturnType<typeof api.describe>> | { ok: boolean }, field: string) {
  const failure = refused(result as Awaited<ReturnType<typeof api.describe>>);
  expect([failure.code, failure.reason]).toEqual([CODE.INVALID_ARGUMENT, 'INVALID_FIELD']);
  expect(failure.fieldViolations.map((v) => v.field)).toEqual([field]);
}

describe('V1/V2: every field of every RPC', () => {
  it.each(ACQUIRE)('Acquire %s (%s) → INVALID_ARGUMENT naming it, nothing granted', async (field, _what, value) => {
    const before = await snapshot();
    const request = {
      request_id: fresh('req'),
      resource: FREE,
      owner_id: 'alice',
      incarnation: '1',
      ttl_ms: '1000',
      [field]: value,
    };
    await expectInvalid(await api.acquire(request), field);
    expect(await snapshot()).toEqual(before);
    // The request id was not recorded either: used next for a valid request, it is a fresh grant, not REQUEST_ID_REUSED.
    if (field !== 'request_id') {
      const valid = {
        request_id: request.request_id,
        resource: fresh('after-invalid'),
        owner_id: 'alice',
        incarnation: '1',
        ttl_ms: '1000',
      };
      expect(ok(await api.acquire(valid)).replayed).toBe(false);
    }
  });

  it.each(RENEW)('Renew %s (%s) → INVALID_ARGUMENT naming it, lease not extended', async (field, _what, value) => {
    const before = await snapshot();
    await expectInvalid(await api.renew({ ...holder, ttl_ms: '5000', [field]: value }), field);
    expect(await snapshot()).toEqual(before);
  });

  it.each(RELEASE)('Release %s (%s) → INVALID_ARGUMENT naming it, lease not released', async (field, _what, value) => {
    const before = await snapshot();
    await expectInvalid(await api.release({ ...holder, [field]: value }), field);
    expect(await snapshot()).toEqual(before);
  });

  it.each(DESCRIBE)('Describe %s (%s) → INVALID_ARGUMENT naming it', async (field, _what, value) => {
    await expectInvalid(await api.describe(value), field);
  });

  it('names every bad field of one request at once', async () => {
    const failure = refused(
      await api.acquire({ request_id: '', resource: FREE, owner_id: '', incarnation: '0', ttl_ms: '1000' }),
    );
    expect(failure.fieldViolations.map((v) => v.field)).toEqual(['request_id', 'owner_id', 'incarnation']);
  });

  it('the valid baseline of each case is accepted (so the refusals above are about the one field)', async () => {
    // Renew with ttl_ms 0 (keep) and the boundary TTLs are valid input.
    expect(ok(await api.renew({ ...holder, ttl_ms: '0' })).lease).toMatchObject({
      ttl_ms: '1000',
      remaining_ms: '1000',
    });
    expect(ok(await api.renew({ ...holder, ttl_ms: '100' })).lease).toMatchObject({ ttl_ms: '100' });
    expect(ok(await api.renew({ ...holder, ttl_ms: '86400000' })).lease).toMatchObject({ ttl_ms: '86400000' });
    const free = fresh('baseline');
    expect(
      ok(
        await api.acquire({
          request_id: 'q'.repeat(512),
          resource: free,
          owner_id: 'é'.repeat(256),
          incarnation: '18446744073709551615',
          ttl_ms: '100',
        }),
      ).lease,
    ).toMatchObject({
      token: '1',
      incarnation: '18446744073709551615',
    });
  });
});
