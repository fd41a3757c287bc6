// What the Toxiproxy tests share: a server in this process, small TCP
// servers of the test's own on 127.0.0.1:0, and clients that record what
// they receive and how their connection ended.
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Toxiproxy, type Proxy } from 'toxiproxy-node-client';
import { eventually } from '@fencer/testkit';
import { startToxiproxy, type RunningToxiproxy } from '../src/index.js';

/** A server in this process with a node client pointed at it. */
export interface Harness {
  readonly server: RunningToxiproxy;
  readonly client: Toxiproxy;
  readonly url: string;
  close(): Promise<void>;
}

/** Starts a Toxiproxy server on 127.0.0.1:0. */
export async function startHarness(): Promise<Harness> {
  const server = await startToxiproxy({ listen: '127.0.0.1:0' });
  const url = `http://${server.address}`;
  return { server, url, client: new Toxiproxy(url), close: () => server.stop() };
}

/** A TCP server of the test's own; `sockets` are the connections it accepted. */
export interface TestServer {
  readonly address: string;
  readonly port: number;
  readonly sockets: Socket[];
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:0 and hands each connection to `onSocket`. */
export async function tcpServer(onSocket: (socket: Socket) => void): Promise<TestServer> {
  const sockets: Socket[] = [];
  const server: Server = createServer({ allowHalfOpen: false }, (socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    port,
    sockets,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** An echo server: every byte comes back. */
export const echoServer = () => tcpServer((socket) => socket.pipe(socket));

/** How a client connection ended, as the client saw it. */
export type Ending = { kind: 'end' } | { kind: 'error'; code: string | undefined };

/** A client that records every byte it receives, with times, and how the connection ended. */
export interface RecordingClient {
  readonly socket: Socket;
  /** Every chunk received, with performance.now() at arrival. */
  readonly chunks: { data: Buffer; atMs: number }[];
  received(): Buffer;
  /** Resolves once at least `bytes` bytes arrived (or rejects after a bound). */
  waitForBytes(bytes: number, timeoutMs?: number): Promise<void>;
  /** Resolves with how the connection ended: FIN, or an error such as ECONNRESET. */
  readonly ended: Promise<Ending>;
}

/** Connects to `address` (a proxy's listen) and records. */
export async function recordingClient(address: string): Promise<RecordingClient> {
  const [host, port] = splitAddress(address);
  const socket = connect({ host, port, allowHalfOpen: true });
  const chunks: { data: Buffer; atMs: number }[] = [];
  socket.on('data', (data: Buffer) => chunks.push({ data, atMs: performance.now() }));
  const ended = new Promise<Ending>((resolve) => {
    socket.once('end', () => resolve({ kind: 'end' }));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve({ kind: 'error', code: error.code }));
    socket.once('close', () => resolve({ kind: 'end' }));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const received = () => Buffer.concat(chunks.map((c) => c.data));
  return {
    socket,
    chunks,
    received,
    ended,
    waitForBytes: (bytes, timeoutMs = 10_000) =>
      eventually(() => (received().length >= bytes ? true : undefined), { timeoutMs, what: `${bytes} bytes` }).then(
        () => undefined,
      ),
  };
}

/** HOST and PORT of `127.0.0.1:PORT`. */
export function splitAddress(address: string): [string, number] {
  const colon = address.lastIndexOf(':');
  return [address.slice(0, colon).replace(/^\[|\]$/g, ''), Number(address.slice(colon + 1))];
}

/** Creates a proxy on 127.0.0.1:0 to `upstream`; its `listen` is the real bound address. */
export function proxyTo(client: Toxiproxy, name: string, upstream: string): Promise<Proxy> {
  return client.createProxy({ name, listen: '127.0.0.1:0', upstream });
}

/** Resolves with the first of `promise` or "pending" after `ms`: to assert that nothing happened within a window. */
export async function stillPending<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  const result = await Promise.race([promise, pending]);
  clearTimeout(timer);
  return result;
}
