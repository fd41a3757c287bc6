// A2 on a running server: `fencer sink` and `fencer coordinator` read their
// credentials file again on SIGHUP, and the new file decides every later
// call on connections that stay open; a file that cannot be used changes
// nothing and says why in one log line.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
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
    args: ['--data', join(dir.path, 'sink')],
    client: (address: string) => sinkClient(address),
    probe: (client: grpc.Client, token: string) =>
      call(client, (client as ReturnType<typeof sinkClient>).GetFence, { resource: 'r' }, token),
  },
  {
    service: 'coordinator',
    args: ['--data', join(dir.path, 'coordinator'), '--sink', '127.0.0.1:1'],
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
    child = await startFencer([service, '--listen', '127.0.0.1:0', '--credentials', file, ...args]);
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
    [
      // A directory in its place: unreadable for every user, root included (mode bits are not).
      'cannot be read',
      () => {
        rmSync(file);
        mkdirSync(file);
      },
      /cannot read credentials file .*EISDIR/,
    ],
  ])('A2: a file that %s keeps the previous credentials and logs why', async (_what, breakFile, reason) => {
    breakFile();
    const line = await hangUp(child, 'credentials not reloaded; the previous ones stay');
    expect(line).toMatchObject({ level: 40, path: file, reason: expect.stringMatching(reason) });
    rmSync(file, { recursive: true });
    writeCredentials([COORDINATOR, ALICE]);
    ok(await probe(client, BOB.token));
    expect(refused(await probe(client, ALICE.token)).code).toBe(CODE.UNAUTHENTICATED);
    expect(reconnected).toBe(false);
  });
});
