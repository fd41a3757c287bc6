// Every toxic on real TCP traffic (TOXIPROXY-API.md §6): an echo or sink
// server of the test's own behind a proxy on 127.0.0.1:0, a client that
// records what arrives and when. Lower bounds on delays are firm, upper
// bounds generous; waits are on events or bounded polls.
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@fencer/testkit';
import {
  echoServer,
  proxyTo,
  recordingClient,
  startHarness,
  stillPending,
  tcpServer,
  type Harness,
  type RecordingClient,
  type TestServer,
} from './helpers.js';

let harness: Harness;
let echo: TestServer;
let sink: TestServer;
/** A toxic's delay that no test outlives: what arrives at all was not delayed by it. */
const HOUR_MS = 3_600_000;
const sunk = new Map<Socket, Buffer[]>();
const clients: RecordingClient[] = [];

beforeAll(async () => {
  harness = await startHarness();
  echo = await echoServer();
  sink = await tcpServer((socket) => {
    sunk.set(socket, []);
    socket.on('data', (data: Buffer) => sunk.get(socket)!.push(data));
  });
});
afterAll(async () => {
  await harness.close();
  await echo.close();
  await sink.close();
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.destroy();
  await harness.client.reset();
  for (const proxy of Object.values(await harness.client.getAll())) await proxy.remove();
});

let counter = 0;
/** A proxy to `upstream` and a connected client, with `toxics` added before the client connects. */
async function setup(upstream: TestServer, toxics: object[] = []) {
  const proxy = await proxyTo(harness.client, `p${++counter}`, upstream.address);
  for (const toxic of toxics) await proxy.addToxic(toxic as never);
  const client = await recordingClient(proxy.listen);
  clients.push(client);
  return { proxy, client };
}

/** Writes `payload` and resolves with the ms until the echo of all of it arrived. */
async function roundTrip(client: RecordingClient, payload: string): Promise<number> {
  const before = client.received().length;
  const start = performance.now();
  client.socket.write(payload);
  await client.waitForBytes(before + payload.length);
  return client.chunks.at(-1)!.atMs - start;
}

/** Everything the sink server has received on its latest connection. */
const sunkBytes = () => Buffer.concat([...sunk.values()].at(-1) ?? []);

describe('latency', () => {
  it.each(['downstream', 'upstream'])('delays the %s direction by at least its latency', async (stream) => {
    const { client } = await setup(echo, [{ type: 'latency', stream, attributes: { latency: 300 } }]);
    expect(await roundTrip(client, 'hello')).toBeGreaterThanOrEqual(295);
  });

  // Where a toxic must not delay, it holds for far longer than the test may
  // run, so no wall-clock bound is needed: a delayed echo never arrives.
  it('has no effect at toxicity 0', async () => {
    const { client } = await setup(echo, [{ type: 'latency', toxicity: 0, attributes: { latency: HOUR_MS } }]);
    await roundTrip(client, 'hello');
  });

  it('stacks: two latency toxics add up', async () => {
    const { client } = await setup(echo, [
      { type: 'latency', name: 'a', attributes: { latency: 150 } },
      { type: 'latency', name: 'b', attributes: { latency: 150 } },
    ]);
    expect(await roundTrip(client, 'x')).toBeGreaterThanOrEqual(295);
  });

  it('applies to an open connection when added, and stops when removed', async () => {
    const { proxy, client } = await setup(echo);
    await roundTrip(client, 'a');
    const toxic = await proxy.addToxic({ type: 'latency', attributes: { latency: HOUR_MS } } as never);
    const echoed = roundTrip(client, 'b');
    expect(await stillPending(echoed, 300)).toBe('pending');
    await toxic.remove();
    await echoed;
    await roundTrip(client, 'c');
  });

  it('passes a held chunk on at once when removed, without losing or reordering bytes', async () => {
    const { proxy, client } = await setup(echo);
    const toxic = await proxy.addToxic({ type: 'latency', attributes: { latency: HOUR_MS } } as never);
    for (const piece of ['one,', 'two,', 'three']) client.socket.write(piece);
    // The echo server has sent everything back, and nothing arrives: the toxic holds it.
    await eventually(() => ((echo.sockets.at(-1)?.bytesWritten ?? 0) >= 13 ? true : undefined));
    expect(await stillPending(client.waitForBytes(1), 200)).toBe('pending');
    await toxic.remove();
    await client.waitForBytes('one,two,three'.length);
    expect(client.received().toString()).toBe('one,two,three');
  });
});

describe('bandwidth', () => {
  it('releases 5000 bytes at 10 KB/s in about 500 ms', async () => {
    const { client } = await setup(echo, [{ type: 'bandwidth', attributes: { rate: 10 } }]);
    const ms = await roundTrip(client, 'x'.repeat(5_000));
    expect(ms).toBeGreaterThanOrEqual(450);
    // Pieces of at most rate*100 bytes.
    expect(Math.max(...client.chunks.map((c) => c.data.length))).toBeLessThanOrEqual(1_000);
  });

  it('stalls at rate 0 and flushes what it held when removed', async () => {
    const { proxy, client } = await setup(sink, [{ type: 'bandwidth', stream: 'upstream', attributes: { rate: 0 } }]);
    client.socket.write('held');
    expect(
      await stillPending(
        eventually(() => (sunkBytes().length > 0 ? true : undefined)),
        300,
      ),
    ).toBe('pending');
    await (await proxy.getToxic('bandwidth_upstream')).remove();
    await eventually(() => (sunkBytes().toString() === 'held' ? true : undefined));
  });
});

describe('slow_close', () => {
  it('holds the close back by its delay', async () => {
    const { client } = await setup(echo, [{ type: 'slow_close', attributes: { delay: 500 } }]);
    await roundTrip(client, 'x');
    const start = performance.now();
    client.socket.end();
    expect(await client.ended).toEqual({ kind: 'end' });
    expect(performance.now() - start).toBeGreaterThanOrEqual(480);
  });

  it('closes at once without it', async () => {
    const { client } = await setup(echo);
    await roundTrip(client, 'x');
    const start = performance.now();
    client.socket.end();
    await client.ended;
    expect(performance.now() - start).toBeLessThan(300);
  });
});

describe('timeout', () => {
  it.each(['downstream', 'upstream'])(
    'drops %s data and closes an idle connection with a FIN after its timeout',
    async (stream) => {
      const start = performance.now();
      const { client } = await setup(echo, [{ type: 'timeout', stream, attributes: { timeout: 500 } }]);
      client.socket.write('dropped');
      expect(await client.ended).toEqual({ kind: 'end' });
      expect(performance.now() - start).toBeGreaterThanOrEqual(480);
      expect(client.received().length).toBe(0);
    },
  );

  it('with 0 drops data forever, and its removal closes the connection', async () => {
    const { proxy, client } = await setup(echo, [{ type: 'timeout', attributes: { timeout: 0 } }]);
    client.socket.write('dropped');
    expect(await stillPending(client.ended, 700)).toBe('pending');
    expect(client.received().length).toBe(0);
    await (await proxy.getToxic('timeout_downstream')).remove();
    expect(await client.ended).toEqual({ kind: 'end' });
  });
});

describe('reset_peer', () => {
  it('resets the client (ECONNRESET) after the first chunk when present at connect', async () => {
    const { client } = await setup(echo, [{ type: 'reset_peer', attributes: { timeout: 0 } }]);
    client.socket.write('x');
    expect(await client.ended).toEqual({ kind: 'error', code: 'ECONNRESET' });
  });

  it('leaves an idle connection open', async () => {
    const { client } = await setup(echo, [{ type: 'reset_peer', attributes: { timeout: 0 } }]);
    expect(await stillPending(client.ended, 400)).toBe('pending');
  });

  it('closes with a FIN, not a reset, when added to an open connection', async () => {
    const { proxy, client } = await setup(echo);
    await roundTrip(client, 'a');
    await proxy.addToxic({ type: 'reset_peer', attributes: { timeout: 100 } } as never);
    const start = performance.now();
    client.socket.write('b');
    expect(await client.ended).toEqual({ kind: 'end' });
    expect(performance.now() - start).toBeGreaterThanOrEqual(95);
  });
});

describe('slicer', () => {
  it('cuts a chunk into small pieces, in order, spaced by its delay in µs', async () => {
    const { client } = await setup(echo, [
      { type: 'slicer', attributes: { average_size: 10, size_variation: 2, delay: 20_000 } },
    ]);
    const payload = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWX';
    const ms = await roundTrip(client, payload);
    expect(client.received().toString()).toBe(payload);
    expect(client.chunks.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...client.chunks.map((c) => c.data.length))).toBeLessThanOrEqual(12);
    expect(ms).toBeGreaterThanOrEqual((client.chunks.length - 1) * 18);
  });
});

describe('limit_data', () => {
  it('lets `bytes` through downstream, cuts the crossing chunk, then closes', async () => {
    const { client } = await setup(echo, [{ type: 'limit_data', attributes: { bytes: 10 } }]);
    await roundTrip(client, 'abcdef');
    client.socket.write('ghijklmnop');
    expect(await client.ended).toEqual({ kind: 'end' });
    expect(client.received().toString()).toBe('abcdefghij');
  });

  it('limits the upstream direction too', async () => {
    const { client } = await setup(sink, [{ type: 'limit_data', stream: 'upstream', attributes: { bytes: 4 } }]);
    client.socket.write('123456789');
    expect(await client.ended).toEqual({ kind: 'end' });
    await eventually(() => (sunkBytes().toString() === '1234' ? true : undefined));
  });

  it('keeps its count across an update', async () => {
    const { proxy, client } = await setup(echo, [{ type: 'limit_data', attributes: { bytes: 10 } }]);
    await roundTrip(client, 'abcdef');
    await (await proxy.getToxic('limit_data_downstream')).update({ attributes: { bytes: 8 } } as never);
    client.socket.write('ghijkl');
    expect(await client.ended).toEqual({ kind: 'end' });
    expect(client.received().toString()).toBe('abcdefgh');
  });

  it('with 0 leaves an idle connection open', async () => {
    const { client } = await setup(echo, [{ type: 'limit_data', attributes: { bytes: 0 } }]);
    expect(await stillPending(client.ended, 400)).toBe('pending');
    client.socket.write('x');
    expect(await client.ended).toEqual({ kind: 'end' });
    expect(client.received().length).toBe(0);
  });
});

describe('connections', () => {
  it('closes the client with a FIN when the upstream refuses', async () => {
    const gone = await tcpServer(() => undefined);
    await gone.close();
    const { client } = await setup(gone);
    expect(await client.ended).toEqual({ kind: 'end' });
  });

  it('deleting a proxy closes its live connections', async () => {
    const { proxy, client } = await setup(echo);
    await roundTrip(client, 'x');
    await proxy.remove();
    expect(await client.ended).toEqual({ kind: 'end' });
  });
});
