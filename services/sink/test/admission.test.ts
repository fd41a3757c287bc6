// What a request costs before it is trusted, on a real sink over real gRPC:
// an unauthenticated caller's request is never read, inflated or decoded
// (A6); an authenticated one is inflated only up to the message bound, which
// sits above the payload limit (V2), and is refused with a reason past it
// (V4) up to grpc-js's own bound, twice as high; it is decoded strictly (V3).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencing } from '@fencer/proto';
import { registry } from '@fencer/server-kit';
import {
  CODE,
  gzipBomb,
  rawUnaryCall,
  readOrMissing,
  refused,
  sinkCalls,
  tempDir,
  type SinkCalls,
} from '@fencer/testkit';
import { sinkConfig, startSink, type RunningSink } from '../src/index.js';

const MiB = 1024 * 1024;
const TOKENS = { coordinator: 'coordinator-token-0001', worker: 'worker-token-000000001' } as const;
const WRITE = '/fencing.v1.Sink/Write';

let dir: ReturnType<typeof tempDir>;
let sink: RunningSink;
let worker: SinkCalls;

beforeAll(async () => {
  dir = tempDir('fencer-sink-admission-');
  const credentials = join(dir.path, 'credentials.json');
  writeFileSync(
    credentials,
    JSON.stringify(Object.entries(TOKENS).map(([role, token]) => ({ token, identity: `${role}-1`, role }))),
  );
  sink = await startSink(
    sinkConfig({ listen: '127.0.0.1:0', data: join(dir.path, 'data'), credentials, maxPayloadBytes: MiB }),
  );
  worker = sinkCalls(sink.address, TOKENS.worker);
  await sinkCalls(sink.address, TOKENS.coordinator).advance({ resource: 'bomb', token: '1', grant_id: 'g1' });
});

afterAll(async () => {
  worker?.close();
  await sink?.stop();
  dir?.remove();
});

/** How many Write requests this process's servers have read, inflated and decoded. */
async function writesRead(): Promise<number> {
  const { values } = await registry.getSingleMetric('fencer_rpc_requests_read_total')!.get();
  return values.find((v) => v.labels.service === 'sink' && v.labels.method === 'Write')?.value ?? 0;
}

/** A Write to resource `bomb` whose payload inflates to about `inflatedBytes`. */
const writeBomb = (resultId: string, inflatedBytes: number) =>
  gzipBomb(
    fencing.Sink.service.Write.requestSerialize({ resource: 'bomb', token: '1', result_id: resultId }),
    4, // payload
    inflatedBytes,
  );

describe('A6: nothing is read for a caller before it is authenticated', () => {
  it.each([
    ['no credentials, 1.5 MiB (under the bound)', {}, 1.5 * MiB],
    ['no credentials, 60 MiB (the observed attack)', {}, 60 * MiB],
    ['an unknown token, 60 MiB', { authorization: 'Bearer not-a-known-token-000' }, 60 * MiB],
  ])('%s: a gzip bomb Write is UNAUTHENTICATED and never inflated', async (_what, metadata, inflatedBytes) => {
    const bomb = writeBomb('unauthenticated', inflatedBytes);
    expect(bomb.bytes.length).toBeLessThan(inflatedBytes / 500);
    const before = await writesRead();
    const failure = refused(await rawUnaryCall(sink.address, WRITE, bomb, metadata));
    expect([failure.code, failure.reason]).toEqual([CODE.UNAUTHENTICATED, 'UNAUTHENTICATED']);
    expect(await writesRead()).toBe(before);
    expect(await readOrMissing(worker, 'bomb', 'unauthenticated')).toBeUndefined();
  });

  it('the same bomb from a known caller is read (so the count above would have seen it)', async () => {
    const before = await writesRead();
    const failure = refused(
      await rawUnaryCall(sink.address, WRITE, writeBomb('authenticated', 1.5 * MiB), {
        authorization: `Bearer ${TOKENS.worker}`,
      }),
    );
    // V2: past the payload limit but within gRPC's bound, validation names the field.
    expect([failure.code, failure.reason, failure.fieldViolations.map((v) => v.field)]).toEqual([
      CODE.INVALID_ARGUMENT,
      'INVALID_FIELD',
      ['payload'],
    ]);
    expect(await writesRead()).toBe(before + 1);
  });
});

describe('V2, V4: a request is bounded after decompression', () => {
  it('a known caller whose Write inflates past the bound is RESOURCE_EXHAUSTED MESSAGE_TOO_LARGE, naming the bound; nothing stored', async () => {
    const failure = refused(
      await rawUnaryCall(sink.address, WRITE, writeBomb('too-large', 3 * MiB), {
        authorization: `Bearer ${TOKENS.worker}`,
      }),
    );
    // The sink's bound: 2 × --max-payload-bytes, at least 2 MiB.
    expect([failure.code, failure.reason, failure.metadata.limit]).toEqual([
      CODE.RESOURCE_EXHAUSTED,
      'MESSAGE_TOO_LARGE',
      String(2 * MiB),
    ]);
    expect(await readOrMissing(worker, 'bomb', 'too-large')).toBeUndefined();
  });

  it("past twice the bound, grpc-js's own backstop answers RESOURCE_EXHAUSTED, never inflating the rest", async () => {
    const before = await writesRead();
    const failure = refused(
      await rawUnaryCall(sink.address, WRITE, writeBomb('oversize', 60 * MiB), {
        authorization: `Bearer ${TOKENS.worker}`,
      }),
    );
    expect(failure.code).toBe(CODE.RESOURCE_EXHAUSTED);
    expect(await writesRead()).toBe(before);
    expect(await readOrMissing(worker, 'bomb', 'oversize')).toBeUndefined();
  });

  it('the sink keeps serving afterwards', async () => {
    const written = await worker.write({ resource: 'bomb', token: '1', result_id: 'after', payload: Buffer.from('x') });
    expect(written.outcome).toBe('APPLIED');
  });
});

describe('V3: a Write is decoded strictly', () => {
  const asWorker = { authorization: `Bearer ${TOKENS.worker}` };
  const valid = (resultId: string) =>
    fencing.Sink.service.Write.requestSerialize({ resource: 'bomb', token: '1', result_id: resultId });
  const head = fencing.Sink.service.Write.requestSerialize({ resource: 'bomb', token: '1' });
  const MALFORMED: [string, Buffer, string | undefined][] = [
    // result_id declares 50 bytes and sends 4 (once applied with a truncated id)
    ['a truncated last field', Buffer.concat([head, Buffer.from([0x1a, 50]), Buffer.from('v3-a')]), 'result_id'],
    // resource (a string) sent as a varint, then bytes a lenient decoder took as its content
    [
      'a string with the varint wire type',
      Buffer.concat([Buffer.from([0x08, 3]), Buffer.from('bom'), valid('v3-b').subarray(6)]),
      'resource',
    ],
    ['field number 0', Buffer.concat([Buffer.from([0x02, 1, 0x72]), valid('v3-c')]), undefined],
    ['invalid UTF-8 in result_id', Buffer.concat([head, Buffer.from([0x1a, 2, 0xc3, 0x28])]), 'result_id'],
  ];

  it.each(MALFORMED)(
    '%s: INVALID_ARGUMENT, MALFORMED_MESSAGE naming the fault; nothing stored',
    async (_what, bytes, field) => {
      const before = await worker.getFence('bomb');
      const failure = refused(await rawUnaryCall(sink.address, WRITE, { bytes }, asWorker));
      expect([failure.code, failure.reason]).toEqual([CODE.INVALID_ARGUMENT, 'MALFORMED_MESSAGE']);
      expect(failure.metadata.fault).toBeTruthy();
      expect(failure.metadata.field).toBe(field);
      expect(failure.fieldViolations.map((v) => v.field)).toEqual(field === undefined ? [] : [field]);
      expect(await worker.getFence('bomb')).toEqual(before);
      for (const resultId of ['v3-a', 'v3-b', 'v3-c', 'v3-d', 'v', 'v3-']) {
        expect(await readOrMissing(worker, 'bomb', resultId)).toBeUndefined();
      }
    },
  );

  it('a valid Write with a field this sink does not know is applied (forward compatibility)', async () => {
    const unknownField = Buffer.from([0xa2, 0x06, 2, 0x68, 0x69]); // field 100, length-delimited "hi"
    const answer = await rawUnaryCall(
      sink.address,
      WRITE,
      { bytes: Buffer.concat([valid('v3-unknown'), unknownField]) },
      asWorker,
    );
    expect(answer.ok && fencing.Sink.service.Write.responseDeserialize(answer.value)).toEqual({
      outcome: 'APPLIED',
      fence: '1',
    });
  });
});
