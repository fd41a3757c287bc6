// A6, V4 in a real sink process: what a call's headers may weigh. The call
// gate answers metadata past --max-metadata-bytes RESOURCE_EXHAUSTED
// METADATA_TOO_LARGE (the bound in the details) before it looks at
// credentials, and says so once per client host and minute; HTTP/2 refuses a
// header block past twice the bound before any call exists.
import http2 from 'node:http2';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CODE,
  logEntries,
  paddingMetadata,
  rawUnaryCall,
  refused,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';

const TOKENS = { worker: 'worker-token-000000001', coordinator: 'coordinator-token-0001' } as const;
const WORKER = TOKENS.worker;
const GET_FENCE = '/fencing.v1.Sink/GetFence';
/** GetFenceRequest{resource: "r"}. */
const REQUEST = { bytes: Buffer.from([0x0a, 1, 0x72]) };

let dir: ReturnType<typeof tempDir>;
let sink: FencerProcess;

beforeAll(async () => {
  dir = tempDir('fencer-metadata-');
  const credentials = join(dir.path, 'credentials.json');
  writeFileSync(
    credentials,
    JSON.stringify(Object.entries(TOKENS).map(([role, token]) => ({ token, identity: `${role}-1`, role }))),
  );
  sink = await startFencer([
    'sink',
    '--credentials',
    credentials,
    '--data',
    join(dir.path, 'data'),
    '--listen',
    '127.0.0.1:0',
    '--max-metadata-bytes',
    '4096',
  ]);
});

afterAll(async () => {
  if (sink) await stopFencer(sink);
  dir?.remove();
});

/**
 * Sends one GetFence with `metadata` over node:http2 once the sink's
 * settings are acknowledged (HTTP/2's header bound applies from then on);
 * resolves with the stream's RST_STREAM code and the grpc-status it got, if any.
 */
async function callAfterSettings(metadata: Record<string, string>): Promise<{ rstCode: number; status?: string }> {
  const session = http2.connect(`http://${sink.address}`);
  session.on('error', () => undefined);
  try {
    // The header bound comes in the sink's second SETTINGS frame; the client acknowledges each on arrival.
    await new Promise<void>((resolve) =>
      session.on('remoteSettings', (settings) => settings.maxHeaderListSize === 8192 && resolve()),
    );
    const stream = session.request({
      ':method': 'POST',
      ':path': GET_FENCE,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...metadata,
    });
    stream.on('error', () => undefined); // a refused stream errors; its rstCode is what is asserted
    let status: string | undefined;
    stream.on('response', (headers) => (status ??= headers['grpc-status'] as string | undefined));
    stream.resume();
    stream.end();
    await new Promise((resolve) => stream.once('close', resolve));
    return { rstCode: stream.rstCode ?? 0, ...(status === undefined ? {} : { status }) };
  } finally {
    session.destroy();
  }
}

describe("A6, V4: a call's metadata is bounded", () => {
  it('metadata under --max-metadata-bytes is served', async () => {
    const answer = await rawUnaryCall(sink.address, GET_FENCE, REQUEST, {
      authorization: `Bearer ${WORKER}`,
      ...paddingMetadata(3 * 1024),
    });
    expect(answer.ok).toBe(true);
  });

  it('past it, RESOURCE_EXHAUSTED METADATA_TOO_LARGE with the bound, before credentials are looked at; one warning per host', async () => {
    for (const authorization of [`Bearer ${WORKER}`, 'Bearer not-a-known-token-000', undefined]) {
      const failure = refused(
        await rawUnaryCall(sink.address, GET_FENCE, REQUEST, {
          ...(authorization ? { authorization } : {}),
          ...paddingMetadata(6 * 1024),
        }),
      );
      expect([failure.code, failure.reason, failure.metadata.limit]).toEqual([
        CODE.RESOURCE_EXHAUSTED,
        'METADATA_TOO_LARGE',
        '4096',
      ]);
    }
    const warnings = logEntries(sink.stderr()).filter((entry) => entry.reason === 'METADATA_TOO_LARGE');
    expect(warnings.map((entry) => [entry.level, entry.limit])).toEqual([[40, 4096]]);
  });

  it('HTTP/2 refuses a header block past twice the bound (ENHANCE_YOUR_CALM) before a call exists, and serves the next', async () => {
    expect(await callAfterSettings(paddingMetadata(9 * 1024))).toEqual({
      rstCode: http2.constants.NGHTTP2_ENHANCE_YOUR_CALM,
    });
    // Between the two bounds the gate answers, with a status.
    expect(await callAfterSettings(paddingMetadata(6 * 1024))).toEqual({
      rstCode: http2.constants.NGHTTP2_NO_ERROR,
      status: String(CODE.RESOURCE_EXHAUSTED),
    });
  });
});
