// A2, A7 on a running server: `fencer sink` and `fencer coordinator` read
// their credentials file again on SIGHUP, and the new file decides every
// later call on connections that stay open. A reload is all or nothing: a
// file that cannot be used (not JSON, no credential, not a regular file,
// over 1 MiB) changes nothing, says why in one warning, and never holds the
// server up; the same file at start is a one-line error and exit 1.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CODE,
  call,
  coordinatorClient,
  eventually,
  logEntries,
  ok,
  refused,
  runFencer,
  sinkClient,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';

const COORDINATOR = { token: 'coordinator-token-reload-0123456789', identity: 'coordinator', role: 'coordinator' };
const ALICE = { token: 'alice-token-reload-0123456789', identity: 'alice', role: 'worker' };
const BOB = { token: 'bob-token-reload-0123456789', identity: 'bob', role: 'worker' };

const dir = tempDir('fencer-reload-');
const children: FencerProcess[] = [];
afterAll(async () => {
  await Promise.all(children.map((child) => stopFencer(child)));
  dir.remove();
});

/** Makes a FIFO at `path` (Node has no mkfifo of its own). */
function mkfifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

/** `entries` as valid credentials JSON padded with blanks past MAX_CREDENTIALS_FILE_BYTES (1 MiB). */
const oversized = (entries: object[]) => JSON.stringify(entries) + ' '.repeat(1024 * 1024);

/** The log entries with `msg`, as the process has written them so far. */
const logged = (child: FencerProcess, msg: string) => logEntries(child.stderr()).filter((entry) => entry.msg === msg);

/** Sends SIGHUP and waits for the reload's log line (the `count`-th with that message). */
async function hangUp(child: FencerProcess, msg: string): Promise<Record<string, unknown>> {
  const before = logged(child, msg).length;
  child.kill('SIGHUP');
  return eventually(() => logged(child, msg)[before], { what: `"${msg}" in the log` });
}

// One reader RPC per service that a worker may call (A4).
const services = [
  {
    service: 'sink',
    args: (data: string) => ['--data', data],
    client: (address: string) => sinkClient(address),
    probe: (client: grpc.Client, token: string) =>
      call(client, (client as ReturnType<typeof sinkClient>).GetFence, { resource: 'r' }, token),
  },
  {
    service: 'coordinator',
    args: (data: string) => ['--data', data, '--sink', '127.0.0.1:1'],
    client: (address: string) => coordinatorClient(address),
    probe: (client: grpc.Client, token: string) =>
      call(client, (client as ReturnType<typeof coordinatorClient>).Describe, { resource: 'r' }, token),
  },
] as const;

describe.each(services)('fencer $service, SIGHUP', ({ service, args, client: connect, probe }) => {
  const file = join(dir.path, `${service}-credentials.json`);
  const writeCredentials = (entries: object[]) => writeFileSync(file, JSON.stringify(entries));
  let child: FencerProcess;
  let client: grpc.Client;
  let reconnected = false;

  beforeAll(async () => {
    writeCredentials([COORDINATOR, ALICE]);
    child = await startFencer([
      service,
      '--listen',
      '127.0.0.1:0',
      '--credentials',
      file,
      ...args(join(dir.path, service)),
    ]);
    children.push(child);
    client = connect(child.address);
    ok(await probe(client, ALICE.token));
    // Any change of the channel's state before the end of the tests means
    // the connection was dropped (and a later call was on a new one).
    const channel = client.getChannel();
    expect(channel.getConnectivityState(false)).toBe(grpc.connectivityState.READY);
    channel.watchConnectivityState(grpc.connectivityState.READY, Infinity, () => (reconnected = true));
  });

  afterAll(() => client?.close());

  it('A2: a rewritten file decides the next calls on the open connection', async () => {
    expect(refused(await probe(client, BOB.token)).code).toBe(CODE.UNAUTHENTICATED);
    writeCredentials([COORDINATOR, BOB]);
    const line = await hangUp(child, 'credentials reloaded');
    expect(line).toMatchObject({ level: 30, path: file, credentials: 2 });

    ok(await probe(client, BOB.token));
    expect(refused(await probe(client, ALICE.token)).code).toBe(CODE.UNAUTHENTICATED);
    expect(reconnected).toBe(false);
  });

  it.each([
    ['is not JSON', () => writeFileSync(file, '[{"token": '), /is not JSON/],
    ['holds an invalid entry', () => writeCredentials([{ ...ALICE, role: 'root' }]), /role must be one of/],
    ['is missing', () => rmSync(file), /cannot read credentials file .*ENOENT/],
    ['A7: holds no credential ([])', () => writeCredentials([]), /holds no credential/],
    ['A7: is a directory', () => (rmSync(file), mkdirSync(file)), /is a directory, not a regular file/],
    // Nobody ever writes it: reading it as a file would wait for a writer forever.
    ['A7: is a FIFO', () => (rmSync(file), mkfifo(file)), /is a FIFO, not a regular file/],
    ['A7: is a symlink to /dev/zero', () => (rmSync(file), symlinkSync('/dev/zero', file)), /is a device/],
    // Valid credentials but for their size: only the bound refuses them.
    ['A7: is larger than 1 MiB', () => writeFileSync(file, oversized([COORDINATOR, ALICE])), /larger than 1048576/],
  ])('A2: a file that %s keeps the previous credentials, with one warning', async (_what, breakFile, reason) => {
    breakFile();
    const since = logEntries(child.stderr()).length;
    const line = await hangUp(child, 'credentials not reloaded; the previous ones stay');
    expect(line).toMatchObject({ level: 40, path: file, reason: expect.stringMatching(reason) });
    // Answered while the file is still there (a FIFO unwritten): the reload
    // did not hold the event loop, and after this round trip the one
    // warning is all the SIGHUP logged.
    ok(await probe(client, BOB.token));
    expect(
      logEntries(child.stderr())
        .slice(since)
        .filter((entry) => Number(entry.level) >= 40),
    ).toEqual([line]);
    rmSync(file, { recursive: true, force: true });
    writeCredentials([COORDINATOR, ALICE]);
    ok(await probe(client, BOB.token));
    expect(refused(await probe(client, ALICE.token)).code).toBe(CODE.UNAUTHENTICATED);
    expect(reconnected).toBe(false);
  });
});

describe.each(services)('fencer $service, start-up (A7)', ({ service, args }) => {
  it.each([
    ['holds no credential ([])', 'empty', (file: string) => writeFileSync(file, '[]'), /holds no credential/],
    ['is a FIFO', 'fifo', mkfifo, /is a FIFO, not a regular file/],
  ])('a credentials file that %s is a one-line error and exit 1', async (_what, name, make, reason) => {
    const file = join(dir.path, `${service}-start-${name}`);
    make(file);
    try {
      // Bounded: a server that accepted the file would run until killed.
      const result = await runFencer(
        [service, '--listen', '127.0.0.1:0', '--credentials', file, ...args(join(dir.path, `${service}-start`))],
        { timeoutMs: 15_000 },
      );
      expect(result).toMatchObject({ code: 1, stdout: '' });
      const lines = result.stderr
        .trim()
        .split('\n')
        .filter((line) => !line.startsWith('{'));
      expect(lines).toEqual([expect.stringMatching(/^error: credentials file /)]);
      expect(lines[0]).toMatch(reason);
    } finally {
      rmSync(file);
    }
  });
});
