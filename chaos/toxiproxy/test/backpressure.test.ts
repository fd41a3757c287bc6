// A slow reader must not make the proxy buffer without bound: a server
// pushes 128 MiB downstream while the client does not read. With
// backpressure the server soon cannot write more, and the proxy holds only
// a few MiB; without it the proxy would read all 128 MiB into memory.
import type { Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '@fencer/testkit';
import { proxyTo, recordingClient, startHarness, tcpServer, type Harness, type TestServer } from './helpers.js';

const TOTAL_BYTES = 128 * 1024 * 1024;
const PIECE = Buffer.alloc(64 * 1024, 0x61);

let harness: Harness;
let firehose: TestServer;

/** Writes TOTAL_BYTES as fast as the socket's own backpressure allows. */
function pour(socket: Socket): void {
  let sent = 0;
  const write = () => {
    while (sent < TOTAL_BYTES) {
      sent += PIECE.length;
      if (!socket.write(PIECE)) {
        socket.once('drain', write);
        return;
      }
    }
    socket.end();
  };
  write();
}

beforeAll(async () => {
  harness = await startHarness();
  firehose = await tcpServer(pour);
});
afterAll(async () => {
  await harness.close();
  await firehose.close();
});

it('holds a bounded number of bytes for a reader that pauses, then delivers all of them', async () => {
  const proxy = await proxyTo(harness.client, 'slow-reader', firehose.address);
  const client = await recordingClient(proxy.listen);
  client.socket.pause();
  // Wait until the server is stuck: its flushed byte count stops moving.
  let last = -1;
  let steady = 0;
  let maxBuffered = 0;
  await eventually(
    () => {
      maxBuffered = Math.max(maxBuffered, harness.server.bufferedBytes());
      const written = firehose.sockets[0]?.bytesWritten ?? 0;
      steady = written > 0 && written === last ? steady + 1 : 0;
      last = written;
      return steady >= 10 ? true : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 50, what: 'the server to stall' },
  );
  // What left the server but not reached the client sits in kernel buffers
  // and in the proxy; loopback buffers hold tens of MiB at most.
  expect(last).toBeLessThan(TOTAL_BYTES - 32 * 1024 * 1024);
  expect(maxBuffered).toBeLessThan(8 * 1024 * 1024);
  let received = 0;
  client.socket.on('data', (data: Buffer) => (received += data.length));
  client.socket.resume();
  await eventually(() => (received >= TOTAL_BYTES ? true : undefined), { timeoutMs: 30_000, what: 'all bytes' });
  expect(received).toBe(TOTAL_BYTES);
  expect(await client.ended).toEqual({ kind: 'end' });
});
