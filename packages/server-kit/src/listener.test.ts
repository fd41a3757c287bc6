// V4: who closed a connection decides whether it is logged as one that made
// no call. Node's HTTP/2 server ends a socket it closes with a FIN and
// destroys it a turn later; a client answering that FIN at once must not
// make the close the client's. These sockets stand in for grpc-js behind
// the injector, so each order of the two FINs is made, not waited for.
import net from 'node:net';
import { Writable } from 'node:stream';
import type * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '@fencer/testkit';
import { ConnectionListener } from './listener.js';

const bounds = { maxConnections: 10, maxConnectionsPerHost: 10, maxConnectionAgeMs: 60_000 };
let listener: ConnectionListener | undefined;

afterEach(() => listener?.close());

/** A listener whose injector does `serve` with each socket, and the log lines it writes. */
async function listen(serve: (socket: net.Socket) => void) {
  const lines: Array<{ msg: string; closedBy?: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { msg: string });
      done();
    },
  });
  const injector = { injectConnection: serve } as unknown as grpc.ConnectionInjector;
  listener = await ConnectionListener.listen({
    host: '127.0.0.1',
    port: 0,
    injector,
    bounds,
    log: pino({ level: 'debug' }, sink),
    service: 'test',
  });
  return { port: listener.port, lines };
}

/** A client socket that reads, so it sees the server's FIN (and answers it with its own). */
function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.resume();
  });
}

describe('ConnectionListener: who closed a connection (V4)', () => {
  it("is the server's when the client's FIN answers the server's, read before the server destroys the socket", async () => {
    const { port, lines } = await listen((socket) => {
      socket.once('end', () => socket.destroy()); // destroyed only once the client's FIN is read
      socket.end();
    });
    await connect(port);
    const silent = await eventually(() => lines.find((line) => line.msg.includes('made no call')));
    expect(silent).toMatchObject({ calls: 0, host: '127.0.0.1' });
    expect(lines.filter((line) => line.msg === 'connection closed')).toEqual([]);
  });

  it("is the client's when the client sends its FIN first", async () => {
    const { port, lines } = await listen(() => undefined);
    const client = await connect(port);
    client.end();
    const closed = await eventually(() => lines.find((line) => line.msg === 'connection closed'));
    expect(closed).toMatchObject({ closedBy: 'client', calls: 0 });
    expect(lines.filter((line) => line.msg.includes('made no call'))).toEqual([]);
  });
});
