// `fencer worker` over TLS against real TLS services: with --tls-ca and its
// bearer token, and under mutual TLS with only its client certificate, whose
// CN is its identity (A2).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type WorkerProcess } from '@fencer/supervisor';
import {
  createTestCa,
  startSecuredCoordinator,
  startSecuredSink,
  stopFencer,
  tempDir,
  writeTestCredentials,
  type FencerProcess,
  type TestCa,
  type TestCredentials,
} from '@fencer/testkit';

let dir: ReturnType<typeof tempDir>;
let ca: TestCa;
let credentials: TestCredentials<'coordinator' | 'worker-a' | 'worker-b'>;
const processes: FencerProcess[] = [];
const workers: WorkerProcess[] = [];

beforeAll(() => {
  dir = tempDir('fencer-worker-tls-');
  ca = createTestCa(dir.path);
  credentials = writeTestCredentials(dir.path, {
    coordinator: 'coordinator-token-0001',
    'worker-a': 'worker-a-token-00001',
    'worker-b': 'worker-b-token-00001',
  });
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await Promise.all(processes.map((p) => stopFencer(p)));
  dir?.remove();
});

/** A sink and a coordinator serving TLS (mutual TLS with `mutual`), the coordinator reaching the sink over TLS too. */
async function services(name: string, mutual: boolean): Promise<{ sink: string; coordinator: string }> {
  const tls = { ...ca.issueServer(), ...(mutual ? { clientCa: ca.cert } : {}) };
  const sink = await startSecuredSink(credentials, join(dir.path, `${name}-sink`), { tls });
  processes.push(sink);
  // Under mutual TLS the coordinator's certificate (CN coordinator) names it to the sink, not its token.
  const sinkTls = { ca: ca.cert, ...(mutual ? { client: ca.issueClient('coordinator') } : {}) };
  const coordinator = await startSecuredCoordinator(credentials, join(dir.path, `${name}-coordinator`), sink.address, {
    tls,
    sinkTls,
  });
  processes.push(coordinator);
  return { sink: sink.address, coordinator: coordinator.address };
}

async function acquireAndWrite(worker: WorkerProcess): Promise<void> {
  worker.send('acquire');
  expect((await worker.next('acquired')).token).toBe('1');
  worker.send('write step-1 done');
  expect(await worker.next('written')).toMatchObject({ outcome: 'applied', fence: '1' });
  worker.send('exit');
  expect((await worker.exited).code).toBe(0);
}

describe('fencer worker over TLS', () => {
  it('--tls-ca with a bearer token: acquires and writes against TLS services', async () => {
    const { sink, coordinator } = await services('tls', false);
    const worker = await startWorker({
      coordinator,
      sink,
      owner: 'worker-a',
      tokenFile: credentials.tokenFile('worker-a'),
      args: ['--commands', '--tls-ca', ca.cert],
    });
    workers.push(worker);
    await acquireAndWrite(worker);
  });

  it('mutual TLS: its client certificate alone (CN worker-b) names it; no bearer token is sent', async () => {
    const { sink, coordinator } = await services('mutual', true);
    const certificate = ca.issueClient('worker-b');
    const worker = await startWorker({
      coordinator,
      sink,
      owner: 'worker-b',
      args: ['--commands', '--tls-ca', ca.cert, '--tls-cert', certificate.cert, '--tls-key', certificate.key],
    });
    workers.push(worker);
    await acquireAndWrite(worker);
  });
});
