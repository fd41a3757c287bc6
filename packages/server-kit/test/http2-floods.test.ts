// V4 in a real sink process: connections that a server ends for an HTTP/2
// flood are logged once per client host and kind of flood within the minute,
// counted by kind and GOAWAY code, and the server goes on serving. Each
// flood is a published attack, sent frame by frame from a raw socket on
// loopback, twice: one log line, two connections ended.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http2 from 'node:http2';
import {
  eventually,
  FLAG,
  frame,
  FRAME,
  grpcRequestHeaders,
  logEntries,
  rawHttp2,
  scrapeMetrics,
  sinkCalls,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
  type GoAway,
} from '@fencer/testkit';

const NOTICE = "closed a connection for its client's HTTP/2 flood or protocol error, with a GOAWAY error code (V4)";
const GET_FENCE = grpcRequestHeaders('/fencing.v1.Sink/GetFence');

let dir: ReturnType<typeof tempDir>;
let sink: FencerProcess;

beforeAll(async () => {
  dir = tempDir('fencer-h2-floods-');
  sink = await startFencer([
    'sink',
    '--insecure',
    '--data',
    join(dir.path, 'data'),
    '--listen',
    '127.0.0.1:0',
    '--metrics',
    '127.0.0.1:0',
  ]);
});

afterAll(async () => {
  if (sink) await stopFencer(sink);
  dir?.remove();
});

/** The sink's log lines for connections it ended over an HTTP/2 error of `kind`. */
const noticesOf = (kind: string) =>
  logEntries(sink.stderr()).filter((entry) => entry.msg === NOTICE && entry.kind === kind);

/** How many sessions the sink ended over `kind`, with GOAWAY `code`, by its metrics. */
async function endedSessions(kind: string, code: string): Promise<number> {
  const pattern = new RegExp(
    `^fencer_http2_session_errors_total\\{service="sink",kind="${kind}",code="${code}"\\} (\\d+)$`,
    'm',
  );
  return Number(pattern.exec(await scrapeMetrics(sink))?.[1] ?? 0);
}

/**
 * Sends `frames` on a new connection (left unread when `read` is false) and
 * resolves, once the connection is closed, with the GOAWAY the sink ended
 * it with, or undefined if none arrived: the sink closes the socket with
 * the rest of the flood still unread in its kernel buffer, which resets the
 * connection, and a client that had not read the GOAWAY yet (a loaded
 * machine) loses it with the reset. The sink's own count says the code
 * either way. An unread connection is read once the sink has counted the end.
 */
async function flood(
  frames: Buffer,
  options: { read: boolean; kind: string; code: string },
): Promise<GoAway | undefined> {
  const before = await endedSessions(options.kind, options.code);
  const connection = rawHttp2(sink.address, { read: options.read });
  connection.send(frames);
  if (!options.read) {
    await eventually(async () => ((await endedSessions(options.kind, options.code)) > before ? true : undefined), {
      what: `the sink to end the ${options.kind} connection`,
    });
    connection.socket.resume();
  }
  // A GOAWAY read before the close settles first ('data' comes before 'close').
  return Promise.race([connection.goaway, connection.closed.then(() => undefined)]);
}

/** The sink still answers a well-behaved client. */
async function stillServes(): Promise<void> {
  const client = sinkCalls(sink.address);
  try {
    expect(await client.getFence('after-the-flood')).toEqual({ fence: '0' });
  } finally {
    client.close();
  }
}

const FLOODS = [
  {
    what: 'a rapid reset (CVE-2023-44487): HEADERS then RST_STREAM, 2,000 times',
    kind: 'rapid-reset',
    code: 'ENHANCE_YOUR_CALM',
    read: true,
    frames: () =>
      Buffer.concat(
        Array.from({ length: 2_000 }, (_, i) => [
          frame(FRAME.HEADERS, FLAG.END_HEADERS, 2 * i + 1, GET_FENCE),
          frame(FRAME.RST_STREAM, 0, 2 * i + 1, Buffer.from([0, 0, 0, http2.constants.NGHTTP2_CANCEL])),
        ]).flat(),
      ),
  },
  {
    what: 'a CONTINUATION flood (CVE-2024-27983): one header block that never ends',
    kind: 'continuation-flood',
    code: 'INTERNAL_ERROR',
    read: true,
    frames: () =>
      Buffer.concat([
        frame(FRAME.HEADERS, 0, 1, GET_FENCE),
        ...Array.from({ length: 100 }, () => frame(FRAME.CONTINUATION, 0, 1, Buffer.alloc(64, 0x40))),
      ]),
  },
  {
    what: 'a PING flood (CVE-2019-9512) whose replies are never read',
    kind: 'control-frame-flood',
    code: 'INTERNAL_ERROR',
    read: false,
    frames: () => Buffer.concat(Array.from({ length: 10_000 }, () => frame(FRAME.PING, 0, 0, Buffer.alloc(8)))),
  },
] as const;

describe('V4: a connection ended for an HTTP/2 flood is logged once per host and kind a minute', () => {
  it.each(FLOODS)('$what: GOAWAY $code, one line for two floods, and the sink still serves', async (each) => {
    for (let run = 0; run < 2; run++) {
      const goaway = await flood(each.frames(), each);
      // Seen on the wire unless the close's reset took it (see flood); counted below either way.
      if (goaway) expect(goaway.code).toBe(http2.constants[`NGHTTP2_${each.code}`]);
    }
    expect(await endedSessions(each.kind, each.code)).toBe(2);
    const notices = noticesOf(each.kind);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ level: 40, host: '127.0.0.1', kind: each.kind, code: each.code });
    await stillServes();
  });

  it('a SETTINGS flood (CVE-2019-9515) is the same kind as a PING flood: counted, and no second line for the host', async () => {
    const settings = Buffer.concat(
      Array.from({ length: 10_000 }, () => frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 3, 0, 0, 0, 100]))),
    );
    const before = await endedSessions('control-frame-flood', 'INTERNAL_ERROR');
    const goaway = await flood(settings, { read: false, kind: 'control-frame-flood', code: 'INTERNAL_ERROR' });
    if (goaway) expect(goaway.code).toBe(http2.constants.NGHTTP2_INTERNAL_ERROR);
    expect(await endedSessions('control-frame-flood', 'INTERNAL_ERROR')).toBe(before + 1);
    expect(noticesOf('control-frame-flood')).toHaveLength(1);
    await stillServes();
  });
});
