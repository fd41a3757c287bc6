// HTTP/2 spoken frame by frame over a plain TCP socket, for what no HTTP/2
// library sends on purpose: floods of calls far faster than a client library
// makes them (A6), and the frame patterns of published attacks on HTTP/2
// servers (V4). The header blocks are HPACK literals without indexing and
// without Huffman coding, so their size on the wire is the size the server
// decodes.
import net from 'node:net';

/** HTTP/2 frame types (RFC 9113, section 6). */
export const FRAME = {
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  CONTINUATION: 0x9,
} as const;

/** HTTP/2 frame flags. */
export const FLAG = { ACK: 0x1, END_STREAM: 0x1, END_HEADERS: 0x4 } as const;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** One frame: 9-byte header, then `payload`. */
export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK integer with an N-bit prefix (RFC 7541, 5.1); `first` holds the bits above the prefix. */
function hpackInteger(value: number, prefixBits: number, first: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [first | value];
  const bytes = [first | max];
  for (value -= max; value >= 0x80; value = Math.floor(value / 0x80)) bytes.push((value % 0x80) | 0x80);
  bytes.push(value);
  return bytes;
}

function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([Buffer.from(hpackInteger(bytes.length, 7, 0)), bytes]);
}

/**
 * The header block of a gRPC request to `path` (e.g. /fencing.v1.Sink/Write)
 * carrying `metadata`, every field a literal without indexing.
 */
export function grpcRequestHeaders(path: string, metadata: Readonly<Record<string, string>> = {}): Buffer {
  const fields: [string, string][] = [
    [':method', 'POST'],
    [':scheme', 'http'],
    [':authority', 'localhost'],
    [':path', path],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ...Object.entries(metadata),
  ];
  return Buffer.concat(
    fields.map(([name, value]) => Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)])),
  );
}

/** `count` metadata entries of `bytes` bytes in all (names x-pad-0...), for calls whose headers weigh what a test needs. */
export function paddingMetadata(bytes: number, count = 4): Record<string, string> {
  return Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`x-pad-${i}`, 'p'.repeat(Math.floor(bytes / count))]),
  );
}

/** A GOAWAY the server sent: its error code and debug data. */
export interface GoAway {
  readonly code: number;
  readonly debug: string;
}

/** An HTTP/2 connection driven frame by frame. */
export interface RawHttp2 {
  readonly socket: net.Socket;
  /** Resolves once the server's first SETTINGS frame has arrived (and, unless told not to, been acknowledged). */
  readonly ready: Promise<void>;
  /** Resolves with the server's first GOAWAY. */
  readonly goaway: Promise<GoAway>;
  /** Resolves when the socket has closed, by either side. */
  readonly closed: Promise<void>;
  /** Called with the id of each stream the server ends (END_STREAM or RST_STREAM). */
  onStreamEnd?: (streamId: number) => void;
  send(bytes: Buffer): void;
}

/**
 * Connects to a plaintext `address` (HOST:PORT) and sends the client preface
 * and an empty SETTINGS frame; the server's SETTINGS and PINGs are
 * acknowledged. With `read: false` nothing the server sends is read (its
 * replies pile up, as from a peer that never reads) until `socket.resume()`.
 */
export function rawHttp2(address: string, options: { read?: boolean } = {}): RawHttp2 {
  const colon = address.lastIndexOf(':');
  const socket = net.connect({ host: address.slice(0, colon), port: Number(address.slice(colon + 1)) });
  socket.on('error', () => undefined); // a reset by the server is an outcome here, seen as 'close'
  let settled!: () => void;
  let goneAway!: (goaway: GoAway) => void;
  const connection: RawHttp2 = {
    socket,
    ready: new Promise<void>((resolve) => (settled = resolve)),
    goaway: new Promise<GoAway>((resolve) => (goneAway = resolve)),
    closed: new Promise<void>((resolve) => socket.once('close', () => resolve())),
    send: (bytes) => {
      if (!socket.destroyed) socket.write(bytes);
    },
  };
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
  if (options.read === false) socket.pause();
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      const [type, flags] = [pending[3]!, pending[4]!];
      const streamId = pending.readUInt32BE(5) & 0x7fffffff;
      const payload = pending.subarray(9, 9 + length);
      pending = pending.subarray(9 + length);
      if (type === FRAME.SETTINGS && !(flags & FLAG.ACK)) {
        connection.send(frame(FRAME.SETTINGS, FLAG.ACK, 0));
        settled();
      } else if (type === FRAME.PING && !(flags & FLAG.ACK)) {
        connection.send(frame(FRAME.PING, FLAG.ACK, 0, payload));
      } else if (type === FRAME.GOAWAY) {
        goneAway({ code: payload.readUInt32BE(4), debug: payload.subarray(8).toString() });
      } else if ((type === FRAME.HEADERS && flags & FLAG.END_STREAM) || type === FRAME.RST_STREAM) {
        connection.onStreamEnd?.(streamId);
      }
    }
  });
  return connection;
}

/** What a flood of calls got: how many the server answered (ended), and whether it ever sent a GOAWAY. */
export interface FloodResult {
  readonly answered: number;
  readonly goaway?: GoAway;
}

/**
 * Makes `calls` gRPC calls to `path` with `metadata`, spread over
 * `connections` connections with up to `inFlight` open on each, every one a
 * HEADERS frame that also ends the request (no message): as fast as the
 * server answers, and as cheaply for this process as a call can be. Resolves
 * once every call is answered, or when a connection closes first (then with
 * the GOAWAY that closed it). `onAnswered` sees the running count.
 */
export async function floodCalls(
  address: string,
  options: {
    path: string;
    metadata: Readonly<Record<string, string>>;
    calls: number;
    connections: number;
    inFlight?: number;
    onAnswered?: (answered: number) => void;
  },
): Promise<FloodResult> {
  const { calls, inFlight = 100 } = options;
  const block = grpcRequestHeaders(options.path, options.metadata);
  let unsent = calls;
  let answered = 0;
  let goaway: GoAway | undefined;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      const connection = rawHttp2(address);
      let nextStream = 1;
      let open = 0;
      let finished!: () => void;
      const done = new Promise<void>((resolve) => (finished = resolve));
      // Tops the connection up to `inFlight` open calls; done once nothing is left to send or answer.
      const pump = () => {
        const frames: Buffer[] = [];
        for (; unsent > 0 && open < inFlight; unsent--, open++, nextStream += 2)
          frames.push(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, nextStream, block));
        if (frames.length > 0) connection.send(Buffer.concat(frames));
        if (open === 0) finished();
      };
      connection.onStreamEnd = () => {
        open--;
        options.onAnswered?.(++answered);
        pump();
      };
      void connection.goaway.then((received) => (goaway ??= received));
      await connection.ready;
      pump();
      await Promise.race([done, connection.closed]);
      connection.socket.destroy();
    }),
  );
  return { answered, ...(goaway ? { goaway } : {}) };
}
