// gRPC calls built by hand over node:http2, for requests no well-behaved
// client sends: bytes that are not a valid encoding of the request (V3), or a
// message compressed with gzip that inflates far past its size (A6, V2),
// alone or among the messages of a stream.
import { connect, type IncomingHttpHeaders } from 'node:http2';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { remoteFailure, type RemoteFailure } from '@fencer/proto';
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
export async function rawUnaryCall(
  address: string,
  path: string,
  message: RawMessage,
  metadata: Record<string, string> = {},
): Promise<Result<Buffer>> {
  const { responses, failure } = await rawStreamCall(address, path, [message], metadata);
  return failure ? { ok: false, failure } : { ok: true, value: responses[0]! };
}

/** What a raw streaming call got back: every response message, and the refusal it ended with, if any. */
export interface RawStreamResult {
  readonly responses: Buffer[];
  readonly failure?: RemoteFailure;
}

/**
 * Sends `messages` in order as the requests of a (client- or bidi-)
 * streaming call to `path`, then half-closes; resolves once the server has
 * ended the call, with every response message's bytes and, unless it ended
 * OK, the decoded refusal.
 */
export function rawStreamCall(
  address: string,
  path: string,
  messages: readonly RawMessage[],
  metadata: Record<string, string> = {},
): Promise<RawStreamResult> {
  // gRPC's length-prefixed messages: compressed flag, 4-byte length, bytes.
  const frames = Buffer.concat(
    messages.map((message) => {
      const frame = Buffer.alloc(5 + message.bytes.length);
      frame.writeUInt8(message.gzip ? 1 : 0, 0);
      frame.writeUInt32BE(message.bytes.length, 1);
      message.bytes.copy(frame, 5);
      return frame;
    }),
  );
  return new Promise((resolve, reject) => {
    const session = connect(`http://${address}`);
    session.on('error', reject);
    const stream = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...(messages.some((message) => message.gzip) ? { 'grpc-encoding': 'gzip' } : {}),
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
      const responses = splitMessages(Buffer.concat(chunks));
      if (code === grpc.status.OK) {
        resolve({ responses });
        return;
      }
      const details = decodeURIComponent(String(headers['grpc-message'] ?? ''));
      resolve({
        responses,
        failure: remoteFailure({ code, details, metadata: grpc.Metadata.fromHttp2Headers(headers) }),
      });
    });
    stream.end(frames);
  });
}

/** The messages of a gRPC body (uncompressed, as fencer servers answer). */
function splitMessages(body: Buffer): Buffer[] {
  const messages: Buffer[] = [];
  for (let at = 0; at + 5 <= body.length;) {
    const length = body.readUInt32BE(at + 1);
    messages.push(body.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  return messages;
}
