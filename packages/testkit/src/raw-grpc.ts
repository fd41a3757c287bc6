// A gRPC call built by hand over node:http2, for requests no well-behaved
// client sends: bytes that are not a valid encoding of the request (V3), or a
// message compressed with gzip that inflates far past its size (A6, V2).
import { connect, type IncomingHttpHeaders } from 'node:http2';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { remoteFailure } from '@fencer/proto';
import type { Result } from './clients.js';

/** One request message as it goes on the wire: its bytes, sent as they are or gzip-compressed. */
export interface RawMessage {
  readonly bytes: Buffer;
  readonly gzip?: boolean;
}

/**
 * A gzip-compressed request that inflates to about `inflatedBytes`: the
 * encoded `fields`, then length-delimited field `field` holding zeros to
 * make up the size (a string of NULs, or a payload). On the wire it takes
 * about a thousandth of that.
 */
export function gzipBomb(fields: Buffer, field: number, inflatedBytes: number): RawMessage {
  const zeros = inflatedBytes - fields.length - 10;
  const head = Buffer.from([...varint((field << 3) | 2), ...varint(zeros)]);
  return { bytes: gzipSync(Buffer.concat([fields, head, Buffer.alloc(zeros)]), { level: 9 }), gzip: true };
}

/** The protobuf varint of a non-negative integer. */
function varint(value: number): number[] {
  const bytes: number[] = [];
  for (; value > 0x7f; value = Math.floor(value / 0x80)) bytes.push((value & 0x7f) | 0x80);
  bytes.push(value);
  return bytes;
}

/**
 * Sends `message` as the one request of a unary call to `path` (e.g.
 * /fencing.v1.Sink/Write) on a plaintext `address`, with `metadata` as
 * headers; resolves with the response message's bytes or the decoded
 * refusal. A server may refuse before reading the request: the body is then
 * left unsent, and that is not an error.
 */
export function rawUnaryCall(
  address: string,
  path: string,
  message: RawMessage,
  metadata: Record<string, string> = {},
): Promise<Result<Buffer>> {
  // gRPC's length-prefixed message: compressed flag, 4-byte length, bytes.
  const frame = Buffer.alloc(5 + message.bytes.length);
  frame.writeUInt8(message.gzip ? 1 : 0, 0);
  frame.writeUInt32BE(message.bytes.length, 1);
  message.bytes.copy(frame, 5);
  return new Promise((resolve, reject) => {
    const session = connect(`http://${address}`);
    session.on('error', reject);
    const stream = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...(message.gzip ? { 'grpc-encoding': 'gzip' } : {}),
      ...metadata,
    });
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (received) => (headers = received));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A refusal can end the stream while the body is still going out.
    stream.on('error', () => {});
    stream.on('trailers', (trailers) => (headers = { ...headers, ...trailers }));
    stream.on('close', () => {
      session.close();
      const code = Number(headers['grpc-status']);
      if (Number.isNaN(code)) {
        reject(new Error(`no grpc-status from ${path} (HTTP/2 stream closed with code ${stream.rstCode})`));
        return;
      }
      if (code === grpc.status.OK) {
        const response = Buffer.concat(chunks);
        resolve({ ok: true, value: response.subarray(5) });
        return;
      }
      const details = decodeURIComponent(String(headers['grpc-message'] ?? ''));
      resolve({
        ok: false,
        failure: remoteFailure({ code, details, metadata: grpc.Metadata.fromHttp2Headers(headers) }),
      });
    });
    stream.end(frame);
  });
}
