// V5 in real server processes: an `authorization` header that HTTP/2 allows
// but gRPC refuses (a tab in it) made grpc-js log the whole header, bearer
// credential included, once per request. Neither server's stderr may hold
// the credential, and the warning appears once, not once per request.
import { writeFileSync } from 'node:fs';
import { connect, constants } from 'node:http2';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFencer, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';

const SECRET = 'V5-worker-credential-0123456789abcdef';
const REQUESTS = 60;
const UNAUTHENTICATED = '16';

let dir: ReturnType<typeof tempDir>;
let credentials: string;

beforeAll(() => {
  dir = tempDir('fencer-v5-');
  credentials = join(dir.path, 'credentials.json');
  writeFileSync(
    credentials,
    JSON.stringify([
      { token: SECRET, identity: 'worker-a', role: 'worker' },
      { token: 'coordinator-credential-0123456789', identity: 'coordinator', role: 'coordinator' },
    ]),
  );
});

afterAll(() => dir?.remove());

/**
 * Sends `count` unary calls to `path` with `authorization` set to each of
 * `values` in turn, over one raw HTTP/2 connection (a gRPC client refuses
 * to send such values), and resolves once every call has been answered.
 */
async function sendMalformed(address: string, path: string, values: readonly string[], count: number) {
  const session = connect(`http://${address}`);
  try {
    const answered = Array.from(
      { length: count },
      (_, i) =>
        new Promise<string | undefined>((resolve, reject) => {
          const stream = session.request({
            [constants.HTTP2_HEADER_METHOD]: 'POST',
            [constants.HTTP2_HEADER_PATH]: path,
            'content-type': 'application/grpc',
            te: 'trailers',
            authorization: values[i % values.length]!,
          });
          let status: string | undefined;
          stream.on('response', (headers) => (status ??= headers['grpc-status'] as string | undefined));
          stream.on('trailers', (trailers) => (status ??= trailers['grpc-status'] as string | undefined));
          stream.on('error', reject);
          stream.on('close', () => resolve(status));
          stream.resume();
          stream.end(Buffer.alloc(5)); // one empty, uncompressed message
        }),
    );
    return await Promise.all(answered);
  } finally {
    session.close();
  }
}

const SERVERS = [
  {
    name: 'sink',
    path: '/fencing.v1.Sink/GetFence',
    args: (data: string) => ['sink', '--credentials', credentials, '--data', data],
  },
  {
    name: 'coordinator',
    path: '/fencing.v1.Coordinator/Describe',
    // No sink is needed to answer (or refuse) Describe.
    args: (data: string) => ['coordinator', '--credentials', credentials, '--data', data, '--sink', '127.0.0.1:9'],
  },
] as const;

describe('V5: secrets never reach a log', () => {
  it.each(SERVERS)(
    '$name: malformed authorization headers leave no credential on stderr, and one warning',
    async ({ name, path, args }) => {
      let server: FencerProcess | undefined = await startFencer([
        ...args(join(dir.path, name)),
        '--listen',
        '127.0.0.1:0',
      ]);
      try {
        const statuses = await sendMalformed(
          server.address,
          path,
          [
            `Bearer\t${SECRET}`,
            `Bearer ${SECRET}\t`,
            `\tBearer ${SECRET}`,
            `Bearer ${SECRET.slice(0, 10)}\t${SECRET.slice(10)}`,
          ],
          REQUESTS,
        );
        // The header never became a credential: every call is UNAUTHENTICATED.
        expect(new Set(statuses)).toEqual(new Set([UNAUTHENTICATED]));
        const stopped = server;
        server = undefined;
        await stopFencer(stopped); // every line it wrote has been read once it exited
        const stderr = stopped.stderr();
        for (const part of [SECRET, SECRET.slice(0, 10), SECRET.slice(10)]) expect(stderr).not.toContain(part);
        const warnings = stderr.split('\n').filter((line) => line.includes('"source":"grpc-js"'));
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toContain('authorization');
      } finally {
        if (server) await stopFencer(server);
      }
    },
  );
});
