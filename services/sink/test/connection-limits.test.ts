// V4 at the connection level, against a real `fencer sink` process and raw
// HTTP/2 or TCP clients that misbehave the way observed attacks did: streams
// past the per-connection bound, 1 MiB results requested and never read,
// sockets that never send the HTTP/2 preface, connections left idle. Each
// assertion is a refusal or a close the server makes, never a duration.
import { writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '@fencer/proto';
import {
  call,
  CODE,
  eventually,
  logEntries,
  loggedLines,
  scrapeMetrics,
  sinkClient,
  startFencer,
  stopFencer,
  tempDir,
  sinkCalls,
  type FencerProcess,
} from '@fencer/testkit';
import { openWriteStream } from './helpers.js';

const { NGHTTP2_ENHANCE_YOUR_CALM } = http2.constants;

let dir: ReturnType<typeof tempDir>;
const children: FencerProcess[] = [];

beforeAll(() => {
  dir = tempDir();
});

afterAll(async () => {
  await Promise.all(children.map((child) => stopFencer(child, 1_000)));
  dir.remove();
});

/** A sink with `flags`; without credentials among them, it runs --insecure. */
async function startSink(name: string, flags: string[]): Promise<FencerProcess> {
  const child = await startFencer([
    'sink',
    ...(flags.includes('--credentials') ? [] : ['--insecure']),
    '--listen',
    '127.0.0.1:0',
    '--data',
    join(dir.path, name),
    ...flags,
  ]);
  children.push(child);
  return child;
}

/** A length-prefixed gRPC message holding a ReadRequest{resource = 1, result_id = 2}. */
function readRequestFrame(resource: string, resultId: string): Buffer {
  const field = (number: number, text: string) => {
    const bytes = Buffer.from(text);
    return Buffer.concat([Buffer.from([(number << 3) | 2, bytes.length]), bytes]);
  };
  const message = Buffer.concat([field(1, resource), field(2, resultId)]);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** Opens a gRPC stream on `session` and never reads what comes back. */
function unreadStream(session: http2.ClientHttp2Session, method: string, body?: Buffer): http2.ClientHttp2Stream {
  const stream = session.request({
    ':method': 'POST',
    ':path': `/fencing.v1.Sink/${method}`,
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  stream.on('error', () => undefined); // a refused stream errors; its rstCode is what is asserted
  stream.pause();
  if (body) stream.end(body);
  return stream;
}

/** The RST_STREAM code a stream ended with (0 if still open when `session` closes). */
const rstCodeOf = (stream: http2.ClientHttp2Stream) =>
  new Promise<number>((resolve) => stream.once('close', () => resolve(stream.rstCode ?? 0)));

/** HOST:PORT (IPv4) as net.connect's options. */
const endpoint = (address: string) => ({ host: address.split(':')[0]!, port: Number(address.split(':')[1]) });

/** Resolves when the server has closed `socket`; the bound is the test's own timeout. */
const closedByServer = (socket: net.Socket) =>
  new Promise<void>((resolve) => {
    socket.resume(); // read, so the server's FIN is seen
    socket.once('close', () => resolve());
  });

describe('V4: streams per connection are bounded', () => {
  it('answers the call past --max-concurrent-streams RESOURCE_EXHAUSTED TOO_MANY_STREAMS, logs it once, and counts ended calls out', async () => {
    const sink = await startSink('streams', ['--max-concurrent-streams', '4']);
    const session = http2.connect(`http://${sink.address}`);
    session.on('error', () => undefined);
    await new Promise((resolve) => session.once('remoteSettings', resolve));
    // HTTP/2's own bound is the backstop, above the gate's.
    expect(session.remoteSettings.maxConcurrentStreams).toBe(8);
    // Four calls held open (half-sent), then two more on the same connection.
    const held = Array.from({ length: 4 }, () => unreadStream(session, 'GetFence'));
    const excess = [unreadStream(session, 'GetFence'), unreadStream(session, 'Write')];
    for (const stream of excess) {
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once('response', resolve));
      expect([headers['grpc-status'], headers['fencing-reason']]).toEqual([
        String(grpc.status.RESOURCE_EXHAUSTED),
        'TOO_MANY_STREAMS',
      ]);
    }
    expect(held.every((s) => !s.closed)).toBe(true);
    // Another connection is not affected.
    const other = sinkCalls(sink.address);
    expect(await other.getFence('any')).toEqual({ fence: '0' });
    other.close();
    // Held calls that end (a reset, a finished call) leave the count: four more fit again.
    await Promise.all(held.map((s) => (s.close(http2.constants.NGHTTP2_CANCEL), rstCodeOf(s))));
    const again = Array.from({ length: 4 }, () => unreadStream(session, 'GetFence', readRequestFrame('x', 'y')));
    const answered = await Promise.all(
      again.map((s) => new Promise<http2.IncomingHttpHeaders>((resolve) => s.once('response', resolve))),
    );
    expect(answered.map((h) => h['fencing-reason'])).toEqual([undefined, undefined, undefined, undefined]);
    session.destroy();
    // One warning for the offender, not one per refused call.
    const warnings = sink
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"TOO_MANY_STREAMS"'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, limit: 4, reason: 'TOO_MANY_STREAMS' });
  });

  it('every end of a call gives its place back: OK, a refusal, a refusal by the gate, a cancel, a deadline, a lost connection', async () => {
    // With room for one call per connection, a call that ended without
    // leaving the count would lock its connection out for good.
    const credentials = join(dir.path, 'ends-credentials.json');
    const worker = 'worker-token-000000001';
    writeFileSync(
      credentials,
      JSON.stringify([
        { token: worker, identity: 'worker-1', role: 'worker' },
        { token: 'coordinator-token-0001', identity: 'coordinator-1', role: 'coordinator' },
      ]),
    );
    const sink = await startSink('ends', [
      '--max-concurrent-streams',
      '1',
      '--credentials',
      credentials,
      '--metrics',
      '127.0.0.1:0',
    ]);
    const client = sinkClient(sink.address); // one channel: every call below shares its connection
    const getFence = (resource: string, token?: string) =>
      call<object, unknown>(client, client.GetFence, { resource }, token);
    const reasonOf = async (pending: ReturnType<typeof getFence>) => {
      const result = await pending;
      return result.ok ? 'OK' : result.failure.reason;
    };
    const rawGetFence = (bytes: Buffer) =>
      new Promise<string>((resolve) =>
        client.makeUnaryRequest(
          '/fencing.v1.Sink/GetFence',
          (b: Buffer) => b,
          (b: Buffer) => b,
          bytes,
          bearer(worker),
          (error) => resolve(error ? (error.metadata.get('fencing-reason')[0] as string) : 'OK'),
        ),
      );
    const callsOpen = async () =>
      Number(/^fencer_rpc_calls_open\{service="sink"\} (\d+)$/m.exec(await scrapeMetrics(sink))?.[1]);

    expect(await reasonOf(getFence('a', worker))).toBe('OK');
    expect(await reasonOf(getFence('', worker))).toBe('INVALID_FIELD'); // the handler's refusal
    expect(await reasonOf(getFence('a'))).toBe('UNAUTHENTICATED'); // the gate's, on the headers
    expect(await rawGetFence(Buffer.from([0x0a, 50, 0x61]))).toBe('MALFORMED_MESSAGE'); // the gate's, on the bytes
    expect(await reasonOf(getFence('a', worker))).toBe('OK');

    // A call held open fills the connection; its end, whatever it is, frees
    // it. The server learns of a client's cancel or deadline asynchronously
    // to the client's next call, so that call may still find it counted.
    const freed = () =>
      eventually(async () => ((await reasonOf(getFence('a', worker))) === 'OK' ? true : undefined), {
        what: 'the ended call to leave the count',
      });
    const held = async (stream: ReturnType<typeof openWriteStream>) => {
      await eventually(
        async () => ((await reasonOf(getFence('a', worker))) === 'TOO_MANY_STREAMS' ? true : undefined),
        {
          what: 'the held stream to fill the connection',
        },
      );
      return stream;
    };
    const cancelled = await held(openWriteStream(client, worker));
    cancelled.call.cancel();
    const end = await cancelled.ended;
    expect(end !== 'OK' && end.code).toBe(CODE.CANCELLED);
    await freed();

    const expiring = client.WriteStream(bearer(worker), { deadline: Date.now() + 500 });
    expiring.on('error', () => undefined);
    const expired = new Promise<number>((resolve) => expiring.on('status', (status) => resolve(status.code)));
    await held({ call: expiring } as ReturnType<typeof openWriteStream>);
    expect(await expired).toBe(CODE.DEADLINE_EXCEEDED);
    await freed();

    // A connection that goes away with a call open: the count it held is dropped, not kept.
    const lost = http2.connect(`http://${sink.address}`);
    lost.on('error', () => undefined);
    lost.request({
      ':method': 'POST',
      ':path': '/fencing.v1.Sink/WriteStream',
      'content-type': 'application/grpc',
      te: 'trailers',
      authorization: `Bearer ${worker}`,
    });
    await eventually(async () => ((await callsOpen()) === 1 ? true : undefined), { what: 'the call to be counted' });
    lost.destroy();
    await eventually(async () => ((await callsOpen()) === 0 ? true : undefined), {
      what: 'the lost connection to leave the count',
    });
    client.close();
  });

  it('refuses new streams (ENHANCE_YOUR_CALM) once unread 1 MiB responses pass --max-session-memory-mib, while another client still reads', async () => {
    const sink = await startSink('unread', ['--max-session-memory-mib', '3']);
    const writer = sinkCalls(sink.address);
    await writer.advance({ resource: 'big', token: '1', grant_id: 'g1' });
    await writer.write({ resource: 'big', token: '1', result_id: 'r', payload: Buffer.alloc(1024 * 1024, 7) });

    const session = http2.connect(`http://${sink.address}`);
    await new Promise((resolve) => session.once('remoteSettings', resolve));
    const streams: http2.ClientHttp2Stream[] = [];
    let refused: number | undefined;
    // One at a time, as a careful attacker would: each Read's 1 MiB answer stays in the server, unread.
    for (let i = 0; i < 20 && refused === undefined; i++) {
      const stream = unreadStream(session, 'Read', readRequestFrame('big', 'r'));
      streams.push(stream);
      const outcome = await Promise.race([
        rstCodeOf(stream),
        new Promise<'answered'>((resolve) => stream.once('response', () => resolve('answered'))),
      ]);
      if (outcome !== 'answered') refused = outcome;
    }
    expect(refused).toBe(NGHTTP2_ENHANCE_YOUR_CALM);
    expect(streams.length).toBeLessThan(20);

    // Another client reads the same megabyte meanwhile.
    const reader = sinkCalls(sink.address);
    expect((await reader.read('big', 'r')).payload).toHaveLength(1024 * 1024);
    reader.close();
    writer.close();
    session.destroy();
  });
});

describe('V4: silent and idle connections are closed after a bound', () => {
  it('closes a TCP connection that never sends the HTTP/2 preface (keepalive ping unanswered), and says so once per host', async () => {
    const sink = await startSink('silent', ['--keepalive-ms', '200', '--keepalive-timeout-ms', '200']);
    const silent = net.connect(endpoint(sink.address));
    const halfPreface = net.connect(endpoint(sink.address), () => halfPreface.write('PRI * HTTP/2.0\r\n'));
    await Promise.all([closedByServer(silent), closedByServer(halfPreface)]);
    const notices = await loggedLines(sink, 'made no call');
    // Two silent connections from one host, one line (the next minute's line would count the other).
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ level: 30, host: '127.0.0.1', calls: 0 });
  });

  it('closes an HTTP/2 connection idle past --max-connection-idle-ms with a GOAWAY', async () => {
    const sink = await startSink('idle', ['--max-connection-idle-ms', '300']);
    const session = http2.connect(`http://${sink.address}`);
    const goaway = new Promise<number>((resolve) => session.once('goaway', (code) => resolve(code)));
    const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    session.on('error', () => undefined);
    expect(await goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
    await closed;
  });
});

describe('V4: the connections a server holds are bounded, in all and per client host', () => {
  /** A socket to `address` from the loopback address `from`; resolves once connected. */
  const connectFrom = (address: string, from: string) =>
    new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ ...endpoint(address), localAddress: from }, () => resolve(socket));
      socket.once('error', reject);
    });

  /** A GetFence over HTTP/2 from `from`: 'answered', or 'closed' if the server closed the connection first. */
  const getFenceFrom = (address: string, from: string) =>
    new Promise<string>((resolve) => {
      const session = http2.connect(`http://${address}`, {
        createConnection: () => net.connect({ ...endpoint(address), localAddress: from }),
      });
      session.on('error', () => undefined);
      session.once('close', () => resolve('closed'));
      const stream = unreadStream(session, 'GetFence', readRequestFrame('r', 'x'));
      stream.resume();
      stream.once('response', () => {
        resolve('answered');
        session.close();
      });
    });

  it('closes a connection past --max-connections-per-host or --max-connections as it arrives, logs it once, and takes the next after one leaves', async () => {
    const sink = await startSink('connections', [
      '--max-connections-per-host',
      '2',
      '--max-connections',
      '3',
      '--metrics',
      '127.0.0.1:0',
    ]);
    /** Waits until the sink counts `count` connections open. */
    const connectionsOpen = (count: number) =>
      eventually(
        async () =>
          new RegExp(`^fencer_connections_open\\{service="sink"\\} ${count}$`, 'm').test(await scrapeMetrics(sink))
            ? true
            : undefined,
        { what: `${count} connections to be counted open` },
      );
    // 127.0.0.1 takes its two places with silent sockets.
    const held = [await connectFrom(sink.address, '127.0.0.1'), await connectFrom(sink.address, '127.0.0.1')];
    await connectionsOpen(2);
    // A third from the same host is closed at once, twice over; another host still gets in.
    expect(await getFenceFrom(sink.address, '127.0.0.1')).toBe('closed');
    expect(await getFenceFrom(sink.address, '127.0.0.1')).toBe('closed');
    const third = await connectFrom(sink.address, '127.0.0.2');
    // Three held in all: a fourth host is refused by the total.
    expect(await getFenceFrom(sink.address, '127.0.0.3')).toBe('closed');

    // A place freed is a place taken again.
    held[0]!.destroy();
    await connectionsOpen(2);
    expect(await getFenceFrom(sink.address, '127.0.0.1')).toBe('answered');
    for (const socket of [held[1]!, third]) socket.destroy();

    const metrics = await scrapeMetrics(sink);
    expect(metrics).toMatch(/^fencer_connections_refused_total\{service="sink",limit="max-connections-per-host"\} 2$/m);
    expect(metrics).toMatch(/^fencer_connections_refused_total\{service="sink",limit="max-connections"\} 1$/m);
    const refusals = logEntries(sink.stderr()).filter((entry) => String(entry.msg).startsWith('refused a connection'));
    // One line per bound and host within the minute, not one per connection.
    expect(refusals.map((entry) => [entry.level, entry.host, entry.limit])).toEqual([
      [40, '127.0.0.1', 2],
      [40, '127.0.0.3', 3],
    ]);
  });
});
