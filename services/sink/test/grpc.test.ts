// Every RPC over real gRPC on 127.0.0.1:0: outcomes and every reason code the
// sink produces (error model), health and reflection, auth (A1, A2, A4), and
// validation of every field (V1, V2) with state unchanged afterwards.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_NAMES } from '@fencer/proto';
import {
  eventually,
  tempDir,
  failureOf,
  healthStatus,
  readOrMissing,
  reflect,
  reflectedServices,
  sinkCalls,
  type SinkCalls,
} from '@fencer/testkit';
import { startSink, sinkConfig, type RunningSink } from '../src/index.js';
import { memoryStore } from './doubles/memory-store.js';
import { SinkEngine } from '../src/core/sink-engine.js';
import { serveSinkApi } from './helpers.js';

const CODE = {
  OK: 0,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
};
const TOKENS = {
  coordinator: 'coordinator-token-0001',
  worker: 'worker-token-000000001',
  admin: 'admin-token-0000000001',
} as const;
const MiB = 1024 * 1024;

let dir: ReturnType<typeof tempDir>;
let sink: RunningSink;
let coordinator: SinkCalls;
let worker: SinkCalls;
let admin: SinkCalls;

beforeAll(async () => {
  dir = tempDir('fencer-sink-grpc-');
  const credentials = join(dir.path, 'credentials.json');
  writeFileSync(
    credentials,
    JSON.stringify(Object.entries(TOKENS).map(([role, token]) => ({ token, identity: `${role}-1`, role }))),
  );
  sink = await startSink(
    sinkConfig({ listen: '127.0.0.1:0', data: join(dir.path, 'data'), credentials, maxPayloadBytes: MiB }),
  );
  coordinator = sinkCalls(sink.address, TOKENS.coordinator);
  worker = sinkCalls(sink.address, TOKENS.worker);
  admin = sinkCalls(sink.address, TOKENS.admin);
});

afterAll(async () => {
  for (const client of [coordinator, worker, admin]) client?.close();
  await sink?.stop();
  dir?.remove();
});

describe('Sink RPCs', () => {
  it('AdvanceFence, Write, Read and GetFence answer their success shapes (F1, F3, F4)', async () => {
    expect(await worker.getFence('rpc')).toEqual({ fence: '0' });
    expect(await coordinator.advance({ resource: 'rpc', token: '1', grant_id: 'g1' })).toEqual({ fence: '1' });
    expect(await coordinator.advance({ resource: 'rpc', token: '1', grant_id: 'g1' })).toEqual({ fence: '1' });
    expect(await worker.write({ resource: 'rpc', token: '1', result_id: 'x', payload: Buffer.from('hello') })).toEqual({
      outcome: 'APPLIED',
      fence: '1',
    });
    expect(await worker.write({ resource: 'rpc', token: '1', result_id: 'x', payload: Buffer.from('hello') })).toEqual({
      outcome: 'REPLAYED',
      fence: '1',
    });
    expect(await worker.read('rpc', 'x')).toEqual({ payload: Buffer.from('hello'), token: '1' });
    expect(await admin.read('rpc', 'x')).toEqual({ payload: Buffer.from('hello'), token: '1' });
    for (const client of [worker, admin, coordinator]) expect(await client.getFence('rpc')).toEqual({ fence: '1' });
  });

  it('the largest token (uint64 max) travels exactly', async () => {
    const max = '18446744073709551615';
    expect(await coordinator.advance({ resource: 'max', token: max, grant_id: 'g' })).toEqual({ fence: max });
    expect(await worker.write({ resource: 'max', token: max, result_id: 'x', payload: Buffer.from('p') })).toEqual({
      outcome: 'APPLIED',
      fence: max,
    });
    expect((await worker.read('max', 'x')).token).toBe(max);
  });

  it('an empty payload is a payload: APPLIED, read back empty, REPLAYED, and distinct from any other (F3)', async () => {
    await coordinator.advance({ resource: 'empty', token: '1', grant_id: 'g1' });
    expect(await worker.write({ resource: 'empty', token: '1', result_id: 'x', payload: Buffer.alloc(0) })).toEqual({
      outcome: 'APPLIED',
      fence: '1',
    });
    expect(await worker.read('empty', 'x')).toEqual({ payload: Buffer.alloc(0), token: '1' });
    expect(
      (await worker.write({ resource: 'empty', token: '1', result_id: 'x', payload: Buffer.alloc(0) })).outcome,
    ).toBe('REPLAYED');
    const conflict = await failureOf(
      worker.write({ resource: 'empty', token: '1', result_id: 'x', payload: Buffer.from([0]) }),
    );
    expect([conflict.code, conflict.reason]).toEqual([CODE.ALREADY_EXISTS, 'RESULT_CONFLICT']);
  });

  it('ids are exact Unicode: 512 bytes of 4-byte characters fit (V2), and NFC and NFD spellings stay apart', async () => {
    const astral = '\u{1F9EA}'.repeat(128); // 128 characters, 256 UTF-16 units, 512 UTF-8 bytes
    await coordinator.advance({ resource: astral, token: '1', grant_id: astral });
    expect(
      (await worker.write({ resource: astral, token: '1', result_id: astral, payload: Buffer.from('astral') })).outcome,
    ).toBe('APPLIED');
    expect(await worker.read(astral, astral)).toEqual({ payload: Buffer.from('astral'), token: '1' });
    expect(await coordinator.advance({ resource: astral, token: '1', grant_id: astral })).toEqual({ fence: '1' });

    const nfc = 'caf\u00e9';
    const nfd = 'cafe\u0301';
    await coordinator.advance({ resource: nfc, token: '1', grant_id: 'g1' });
    expect(await worker.getFence(nfd)).toEqual({ fence: '0' });
    await coordinator.advance({ resource: nfd, token: '2', grant_id: 'g2' });
    expect(
      (await worker.write({ resource: nfc, token: '1', result_id: nfd, payload: Buffer.from('nfc/nfd') })).outcome,
    ).toBe('APPLIED');
    expect(
      (await worker.write({ resource: nfc, token: '1', result_id: nfc, payload: Buffer.from('nfc/nfc') })).outcome,
    ).toBe('APPLIED');
    expect((await worker.read(nfc, nfd)).payload).toEqual(Buffer.from('nfc/nfd'));
    expect((await worker.read(nfc, nfc)).payload).toEqual(Buffer.from('nfc/nfc'));
    expect(await readOrMissing(worker, nfd, nfd)).toBeUndefined();
  });

  it("A5: a fence bound to another owner refuses this worker's write (OWNER_MISMATCH with the fence); its own is APPLIED", async () => {
    await coordinator.advance({ resource: 'owned', token: '3', grant_id: 'g3', owner_id: 'worker-2' });
    const mismatch = await failureOf(
      worker.write({ resource: 'owned', token: '3', result_id: 'x', payload: Buffer.from('p') }),
    );
    expect([mismatch.code, mismatch.reason, mismatch.metadata.fence]).toEqual([
      CODE.PERMISSION_DENIED,
      'OWNER_MISMATCH',
      '3',
    ]);
    expect(await readOrMissing(worker, 'owned', 'x')).toBeUndefined();
    await coordinator.advance({ resource: 'owned', token: '4', grant_id: 'g4', owner_id: 'worker-1' });
    expect(await worker.write({ resource: 'owned', token: '4', result_id: 'x', payload: Buffer.from('p') })).toEqual({
      outcome: 'APPLIED',
      fence: '4',
    });
  });

  it('every refusal carries its code, reason and the current fence', async () => {
    await coordinator.advance({ resource: 'refuse', token: '1', grant_id: 'g1' });
    await worker.write({ resource: 'refuse', token: '1', result_id: 'x', payload: Buffer.from('a') });
    await coordinator.advance({ resource: 'refuse', token: '2', grant_id: 'g2' });

    const stale = await failureOf(
      worker.write({ resource: 'refuse', token: '1', result_id: 'y', payload: Buffer.from('a') }),
    );
    expect([stale.code, stale.reason, stale.metadata.fence]).toEqual([CODE.FAILED_PRECONDITION, 'STALE_TOKEN', '2']);
    const staleReplay = await failureOf(
      worker.write({ resource: 'refuse', token: '1', result_id: 'x', payload: Buffer.from('a') }),
    );
    expect([staleReplay.code, staleReplay.reason, staleReplay.metadata.fence]).toEqual([
      CODE.FAILED_PRECONDITION,
      'STALE_TOKEN',
      '2',
    ]);
    const notIssued = await failureOf(
      worker.write({ resource: 'refuse', token: '3', result_id: 'y', payload: Buffer.from('a') }),
    );
    expect([notIssued.code, notIssued.reason, notIssued.metadata.fence]).toEqual([
      CODE.FAILED_PRECONDITION,
      'TOKEN_NOT_ISSUED',
      '2',
    ]);
    const conflict = await failureOf(
      worker.write({ resource: 'refuse', token: '2', result_id: 'x', payload: Buffer.from('b') }),
    );
    expect([conflict.code, conflict.reason]).toEqual([CODE.ALREADY_EXISTS, 'RESULT_CONFLICT']);
    const missing = await failureOf(worker.read('refuse', 'nope'));
    expect([missing.code, missing.reason]).toEqual([CODE.NOT_FOUND, 'RESULT_NOT_FOUND']);
    const lower = await failureOf(coordinator.advance({ resource: 'refuse', token: '1', grant_id: 'g1' }));
    expect([lower.code, lower.reason, lower.metadata.fence]).toEqual([
      CODE.FAILED_PRECONDITION,
      'FENCE_REGRESSION',
      '2',
    ]);
    const otherGrant = await failureOf(
      coordinator.advance({ resource: 'refuse', token: '2', grant_id: 'someone-else' }),
    );
    expect([otherGrant.code, otherGrant.reason, otherGrant.metadata.fence]).toEqual([
      CODE.FAILED_PRECONDITION,
      'FENCE_REGRESSION',
      '2',
    ]);

    // Nothing any refusal touched changed.
    expect(await worker.getFence('refuse')).toEqual({ fence: '2' });
    expect(await worker.read('refuse', 'x')).toEqual({ payload: Buffer.from('a'), token: '1' });
    expect(await readOrMissing(worker, 'refuse', 'y')).toBeUndefined();
  });
});

describe('standard services', () => {
  it('health reports SERVING for the server and fencing.v1.Sink', async () => {
    expect(await healthStatus(sink.address, '')).toBe('SERVING');
    expect(await healthStatus(sink.address, SERVICE_NAMES.sink)).toBe('SERVING');
  });

  it('reflection lists exactly what the sink serves: Sink and health', async () => {
    const services = await reflectedServices(sink.address);
    expect([...services].sort()).toEqual(['fencing.v1.Sink', 'grpc.health.v1.Health']);
  });

  it('reflection describes google.rpc.ErrorInfo and BadRequest, so tools can decode error details', async () => {
    for (const symbol of ['google.rpc.ErrorInfo', 'google.rpc.BadRequest', 'google.rpc.Status']) {
      const response = await reflect(sink.address, { file_containing_symbol: symbol });
      expect(response.error_response).toBeUndefined();
      expect(response.file_descriptor_response?.file_descriptor_proto.length).toBeGreaterThan(0);
    }
  });
});

describe('authentication and authorization (A2, A4)', () => {
  it('a call without a bearer token is UNAUTHENTICATED', async () => {
    const anonymous = sinkCalls(sink.address);
    try {
      for (const call of [
        anonymous.getFence('auth'),
        anonymous.write({ resource: 'auth', token: '1', result_id: 'x', payload: Buffer.from('p') }),
      ]) {
        const failure = await failureOf(call);
        expect([failure.code, failure.reason]).toEqual([CODE.UNAUTHENTICATED, 'UNAUTHENTICATED']);
      }
    } finally {
      anonymous.close();
    }
  });

  it('an unknown bearer token is UNAUTHENTICATED and changes nothing', async () => {
    const stranger = sinkCalls(sink.address, 'not-a-known-token-at-all');
    try {
      const failure = await failureOf(stranger.advance({ resource: 'auth', token: '7', grant_id: 'g7' }));
      expect([failure.code, failure.reason]).toEqual([CODE.UNAUTHENTICATED, 'UNAUTHENTICATED']);
      expect(await worker.getFence('auth')).toEqual({ fence: '0' });
    } finally {
      stranger.close();
    }
  });

  // A4, plus the coordinator on GetFence (L6: a coordinator that lost its data reads the fence).
  const matrix = [
    { method: 'AdvanceFence', allowed: ['coordinator'] },
    { method: 'Write', allowed: ['worker'] },
    { method: 'Read', allowed: ['worker', 'admin'] },
    { method: 'GetFence', allowed: ['worker', 'admin', 'coordinator'] },
  ] as const;
  const roles = ['coordinator', 'worker', 'admin'] as const;
  it.each(
    matrix.flatMap(({ method, allowed }) =>
      roles.map((role) => ({ method, role, allowed: (allowed as readonly string[]).includes(role) })),
    ),
  )('$method by $role: allowed=$allowed', async ({ method, role, allowed }) => {
    const client = { coordinator, worker, admin }[role];
    const resource = `roles-${method}-${role}`;
    await coordinator.advance({ resource, token: '1', grant_id: 'g1' });
    await worker.write({ resource, token: '1', result_id: 'x', payload: Buffer.from('p') });
    const call = {
      AdvanceFence: () => client.advance({ resource, token: '2', grant_id: 'g2' }),
      Write: () => client.write({ resource, token: '1', result_id: 'y', payload: Buffer.from('p') }),
      Read: () => client.read(resource, 'x'),
      GetFence: () => client.getFence(resource),
    }[method];
    if (allowed) {
      await call();
    } else {
      const failure = await failureOf(call());
      expect([failure.code, failure.reason]).toEqual([CODE.PERMISSION_DENIED, 'PERMISSION_DENIED']);
      // A refused AdvanceFence or Write changed nothing.
      expect(await worker.getFence(resource)).toEqual({ fence: '1' });
      expect(await readOrMissing(worker, resource, 'y')).toBeUndefined();
    }
  });
});

describe('validation of every field (V1, V2)', () => {
  const long = 'r'.repeat(513);
  const multibyteLong = 'é'.repeat(257); // 514 bytes in 257 characters
  type Case = { name: string; field: string; call: () => Promise<unknown> };
  const cases: Case[] = [
    {
      name: 'AdvanceFence empty resource',
      field: 'resource',
      call: () => coordinator.advance({ resource: '', token: '5', grant_id: 'g5' }),
    },
    {
      name: 'AdvanceFence resource with a control character',
      field: 'resource',
      call: () => coordinator.advance({ resource: 'v\u0007', token: '5', grant_id: 'g5' }),
    },
    {
      name: 'AdvanceFence resource with NUL',
      field: 'resource',
      call: () => coordinator.advance({ resource: 'v\u0000x', token: '5', grant_id: 'g5' }),
    },
    {
      name: 'AdvanceFence resource over 512 bytes',
      field: 'resource',
      call: () => coordinator.advance({ resource: long, token: '5', grant_id: 'g5' }),
    },
    {
      name: 'AdvanceFence token 0',
      field: 'token',
      call: () => coordinator.advance({ resource: 'v', token: '0', grant_id: 'g5' }),
    },
    {
      name: 'AdvanceFence empty grant_id',
      field: 'grant_id',
      call: () => coordinator.advance({ resource: 'v', token: '5', grant_id: '' }),
    },
    {
      name: 'AdvanceFence grant_id with a control character',
      field: 'grant_id',
      call: () => coordinator.advance({ resource: 'v', token: '5', grant_id: 'g\n5' }),
    },
    {
      name: 'AdvanceFence grant_id over 512 bytes (UTF-8)',
      field: 'grant_id',
      call: () => coordinator.advance({ resource: 'v', token: '5', grant_id: multibyteLong }),
    },
    {
      name: 'Write empty resource',
      field: 'resource',
      call: () => worker.write({ resource: '', token: '1', result_id: 'new', payload: Buffer.from('p') }),
    },
    {
      name: 'Write resource over 512 bytes',
      field: 'resource',
      call: () => worker.write({ resource: long, token: '1', result_id: 'new', payload: Buffer.from('p') }),
    },
    {
      name: 'Write token 0',
      field: 'token',
      call: () => worker.write({ resource: 'v', token: '0', result_id: 'new', payload: Buffer.from('p') }),
    },
    {
      name: 'Write empty result_id',
      field: 'result_id',
      call: () => worker.write({ resource: 'v', token: '1', result_id: '', payload: Buffer.from('p') }),
    },
    {
      name: 'Write result_id with a control character',
      field: 'result_id',
      call: () => worker.write({ resource: 'v', token: '1', result_id: 'new\u001b', payload: Buffer.from('p') }),
    },
    {
      name: 'Write resource with NUL',
      field: 'resource',
      call: () => worker.write({ resource: 'v\u0000new', token: '1', result_id: 'x', payload: Buffer.from('p') }),
    },
    {
      name: 'Write result_id with NUL',
      field: 'result_id',
      call: () => worker.write({ resource: 'v', token: '1', result_id: 'new\u0000x', payload: Buffer.from('p') }),
    },
    {
      name: 'Write result_id over 512 bytes',
      field: 'result_id',
      call: () => worker.write({ resource: 'v', token: '1', result_id: long, payload: Buffer.from('p') }),
    },
    {
      name: 'Write payload over 1 MiB',
      field: 'payload',
      call: () => worker.write({ resource: 'v', token: '1', result_id: 'new', payload: Buffer.alloc(MiB + 1, 1) }),
    },
    { name: 'Read empty resource', field: 'resource', call: () => worker.read('', 'x') },
    { name: 'Read result_id with a control character', field: 'result_id', call: () => worker.read('v', 'x\u007f') },
    { name: 'Read empty result_id', field: 'result_id', call: () => worker.read('v', '') },
    { name: 'Read resource with NUL', field: 'resource', call: () => worker.read('v\u0000x', 'x') },
    {
      name: 'AdvanceFence grant_id with NUL',
      field: 'grant_id',
      call: () => coordinator.advance({ resource: 'v', token: '5', grant_id: 'g\u00005' }),
    },
    { name: 'GetFence resource with NUL', field: 'resource', call: () => worker.getFence('v\u0000') },
    {
      name: 'AdvanceFence resource with a bidi override (Cf)',
      field: 'resource',
      call: () => coordinator.advance({ resource: 'v\u202E', token: '5', grant_id: 'g5' }),
    },
    {
      name: 'AdvanceFence grant_id with a paragraph separator (Zp)',
      field: 'grant_id',
      call: () => coordinator.advance({ resource: 'v', token: '5', grant_id: 'g\u20295' }),
    },
    {
      name: 'Write result_id with a zero-width space (Cf)',
      field: 'result_id',
      call: () => worker.write({ resource: 'v', token: '1', result_id: 'new\u200B', payload: Buffer.from('p') }),
    },
    { name: 'Read resource with a line separator (Zl)', field: 'resource', call: () => worker.read('v\u2028', 'x') },
    {
      name: 'GetFence resource with a byte order mark (Cf)',
      field: 'resource',
      call: () => worker.getFence('\uFEFFv'),
    },
    {
      name: 'AdvanceFence owner_id with a control character',
      field: 'owner_id',
      call: () => coordinator.advance({ resource: 'v', token: '5', grant_id: 'g5', owner_id: 'worker\u0007' }),
    },
    {
      name: 'AdvanceFence owner_id with a bidi override (Cf)',
      field: 'owner_id',
      call: () => coordinator.advance({ resource: 'v', token: '5', grant_id: 'g5', owner_id: '\u202Eworker' }),
    },
    {
      name: 'AdvanceFence owner_id over 512 bytes',
      field: 'owner_id',
      call: () => coordinator.advance({ resource: 'v', token: '5', grant_id: 'g5', owner_id: long }),
    },
    { name: 'GetFence empty resource', field: 'resource', call: () => worker.getFence('') },
    { name: 'GetFence resource over 512 bytes', field: 'resource', call: () => worker.getFence(long) },
  ];

  beforeAll(async () => {
    await coordinator.advance({ resource: 'v', token: '1', grant_id: 'g1' });
    await worker.write({ resource: 'v', token: '1', result_id: 'x', payload: Buffer.from('kept') });
  });

  it.each(cases)('$name is INVALID_ARGUMENT naming $field, state unchanged', async ({ field, call }) => {
    const failure = await failureOf(call());
    expect([failure.code, failure.reason]).toEqual([CODE.INVALID_ARGUMENT, 'INVALID_FIELD']);
    expect(failure.fieldViolations.map((v) => v.field)).toEqual([field]);
    expect(await worker.getFence('v')).toEqual({ fence: '1' });
    expect(await worker.read('v', 'x')).toEqual({ payload: Buffer.from('kept'), token: '1' });
    expect(await readOrMissing(worker, 'v', 'new')).toBeUndefined();
  });

  it('a request with several bad fields names each of them', async () => {
    const failure = await failureOf(
      worker.write({ resource: '', token: '0', result_id: '', payload: Buffer.alloc(MiB + 1) }),
    );
    expect(failure.code).toBe(CODE.INVALID_ARGUMENT);
    expect(failure.fieldViolations.map((v) => v.field).sort()).toEqual(['payload', 'resource', 'result_id', 'token']);
  });

  it("a payload far over the limit, within gRPC's bound, is still INVALID_ARGUMENT naming payload (V2)", async () => {
    const failure = await failureOf(
      worker.write({ resource: 'v', token: '1', result_id: 'huge', payload: Buffer.alloc(1.5 * MiB, 1) }),
    );
    expect([failure.code, failure.reason, failure.fieldViolations.map((v) => v.field)]).toEqual([
      CODE.INVALID_ARGUMENT,
      'INVALID_FIELD',
      ['payload'],
    ]);
  });

  it('a payload of exactly the limit is accepted', async () => {
    expect(
      (await worker.write({ resource: 'v', token: '1', result_id: 'exact', payload: Buffer.alloc(MiB, 7) })).outcome,
    ).toBe('APPLIED');
    expect((await worker.read('v', 'exact')).payload.length).toBe(MiB);
  });
});

describe('a sink configured with a smaller payload limit, without auth', () => {
  it('honours the limit (V2) and admits every caller (--insecure)', async () => {
    const small = tempDir('fencer-sink-grpc-');
    const insecure = await startSink(
      sinkConfig({ listen: '127.0.0.1:0', data: small.path, insecure: true, maxPayloadBytes: 1000 }),
    );
    const anonymous = sinkCalls(insecure.address);
    try {
      await anonymous.advance({ resource: 'r', token: '1', grant_id: 'g1' });
      expect(
        (await anonymous.write({ resource: 'r', token: '1', result_id: 'ok', payload: Buffer.alloc(1000) })).outcome,
      ).toBe('APPLIED');
      const failure = await failureOf(
        anonymous.write({ resource: 'r', token: '1', result_id: 'big', payload: Buffer.alloc(1001) }),
      );
      expect([failure.code, failure.reason, failure.fieldViolations.map((v) => v.field)]).toEqual([
        CODE.INVALID_ARGUMENT,
        'INVALID_FIELD',
        ['payload'],
      ]);
      expect(await readOrMissing(anonymous, 'r', 'big')).toBeUndefined();
    } finally {
      anonymous.close();
      await insecure.stop();
      small.remove();
    }
  });
});

/** Every key and value in a stopped sink's LevelDB, as bytes: equal dumps mean nothing was written. */
async function stored(dataDir: string): Promise<[Buffer, Buffer][]> {
  const db = new Level<Buffer, Buffer>(dataDir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  try {
    return await db.iterator().all();
  } finally {
    await db.close();
  }
}

describe('ids that are blank or hold a noncharacter (V2), against a running sink', () => {
  it('a single-space resource and a U+FFFE result_id are INVALID_ARGUMENT naming the field; nothing is written', async () => {
    const own = tempDir('fencer-sink-grpc-');
    const config = sinkConfig({
      listen: '127.0.0.1:0',
      data: join(own.path, 'data'),
      insecure: true,
      maxPayloadBytes: MiB,
    });
    const session = async (run: (client: SinkCalls) => Promise<void>) => {
      const running = await startSink(config);
      const client = sinkCalls(running.address);
      try {
        await run(client);
      } finally {
        client.close();
        await running.stop();
      }
    };
    try {
      await session(async (client) => {
        await client.advance({ resource: 'v', token: '1', grant_id: 'g1' });
        await client.write({ resource: 'v', token: '1', result_id: 'x', payload: Buffer.from('kept') });
      });
      const before = await stored(config.dataDir);
      // Each of these, were its id accepted, would store a fence or a result.
      const payload = Buffer.from('p');
      const refused: [field: string, call: (client: SinkCalls) => Promise<unknown>][] = [
        ['resource', (c) => c.advance({ resource: ' ', token: '1', grant_id: 'g1' })],
        ['resource', (c) => c.write({ resource: ' ', token: '1', result_id: 'x', payload })],
        ['result_id', (c) => c.write({ resource: 'v', token: '1', result_id: '\uFFFE', payload })],
        ['result_id', (c) => c.write({ resource: 'v', token: '1', result_id: 'x\uFFFE', payload })],
      ];
      await session(async (client) => {
        for (const [field, call] of refused) {
          const failure = await failureOf(call(client));
          expect([failure.code, failure.reason, failure.fieldViolations.map((v) => v.field)]).toEqual([
            CODE.INVALID_ARGUMENT,
            'INVALID_FIELD',
            [field],
          ]);
        }
      });
      expect(await stored(config.dataDir)).toEqual(before);
    } finally {
      own.remove();
    }
  });
});

describe('storage failure', () => {
  it('fail-stop: calls waiting on a batch that fails are STORAGE_UNAVAILABLE (T3; never OK, never a refusal), and so is every later call', async () => {
    const { store, backend } = memoryStore(undefined, { manualSync: true });
    const server = await serveSinkApi(new SinkEngine(store));
    const client = sinkCalls(server.address);
    const batchWaiting = () =>
      eventually(() => (backend.waitingBatches > 0 ? true : undefined), { what: 'a batch waiting for its sync' });
    try {
      const first = client.advance({ resource: 'r', token: '1', grant_id: 'g1' });
      await batchWaiting();
      backend.syncNext();
      expect(await first).toEqual({ fence: '1' });

      // The advance to 2 is in flight; a stale write rests on it (F1), a
      // token-2 write is committed behind it (F6 pipelining).
      const advance = client.advance({ resource: 'r', token: '2', grant_id: 'g2' });
      await batchWaiting();
      const stale = client.write({ resource: 'r', token: '1', result_id: 'old', payload: Buffer.from('p') });
      const applied = client.write({ resource: 'r', token: '2', result_id: 'new', payload: Buffer.from('p') });
      await eventually(() => (store.stats.commits === 3 ? true : undefined), {
        what: 'the token-2 write to be committed',
      });
      backend.failNext();
      for (const call of [advance, stale, applied, client.getFence('r'), client.read('r', 'new')]) {
        const failure = await failureOf(call);
        expect([failure.code, failure.reason]).toEqual([CODE.UNAVAILABLE, 'STORAGE_UNAVAILABLE']);
      }
      expect(backend.disk.fences.get('r')?.fence).toBe(1n);
      expect(backend.disk.results.size).toBe(0);
    } finally {
      client.close();
      await server.stop();
    }
  });

  it('fail-stop: a failed read is answered STORAGE_UNAVAILABLE (T3), and so is every later call', async () => {
    const { store, backend } = memoryStore();
    const server = await serveSinkApi(new SinkEngine(store));
    const client = sinkCalls(server.address);
    try {
      await client.advance({ resource: 'r', token: '1', grant_id: 'g1' });
      backend.breakDisk();
      for (const call of [
        client.write({ resource: 'r', token: '1', result_id: 'x', payload: Buffer.from('p') }),
        client.advance({ resource: 'r', token: '2', grant_id: 'g2' }),
        client.getFence('r'),
        client.read('r', 'x'),
      ]) {
        const failure = await failureOf(call);
        expect([failure.code, failure.reason]).toEqual([CODE.UNAVAILABLE, 'STORAGE_UNAVAILABLE']);
      }
      expect(await store.whenFailed()).toBeInstanceOf(Error);
    } finally {
      client.close();
      await server.stop();
    }
  });
});
