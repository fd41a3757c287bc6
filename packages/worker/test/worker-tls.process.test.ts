// `fencer worker` over TLS against real TLS services: with --tls-ca and its
// bearer token, and under mutual TLS with only its client certificate, whose
// CN is its identity (A2).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCredentials, startWorker, type ClusterCredentials, type WorkerProcess } from '@fencer/supervisor';
import { createTestCa, startFencer, stopFencer, tempDir, type FencerProcess, type TestCa } from '@fencer/testkit';

let dir: ReturnType<typeof tempDir>;
let ca: TestCa;
let credentials: ClusterCredentials;
const processes: FencerProcess[] = [];
const workers: WorkerProcess[] = [];

beforeAll(() => {
  dir = tempDir('fencer-worker-tls-');
  ca = createTestCa(dir.path);
  credentials = ensureCredentials(dir.path);
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await Promise.all(processes.map((p) => stopFencer(p)));
  dir?.remove();
});

/** A sink and a coordinator serving TLS (mutual TLS with `mutual`), the coordinator reaching the sink over TLS too. */
async function services(name: string, mutual: boolean): Promise<{ sink: string; coordinator: string }> {
  const server = ca.issueServer();
  const serve = ['--credentials', credentials.credentialsFile, '--listen', '127.0.0.1:0'];
  const tls = ['--tls-cert', server.cert, '--tls-key', server.key, ...(mutual ? ['--tls-ca', ca.cert] : [])];
  const sink = await startFencer(['sink', ...serve, '--data', join(dir.path, `${name}-sink`), ...tls]);
  processes.push(sink);
  const asCoordinator = mutual ? ca.issueClient('coordinator') : undefined;
  const toSink = asCoordinator
    ? ['--sink-tls-cert', asCoordinator.cert, '--sink-tls-key', asCoordinator.key]
    : ['--sink-token-file', credentials.sinkTokenFile];
  const coordinator = await startFencer([
    'coordinator',
    ...[...serve, '--data', join(dir.path, `${name}-coordinator`), ...tls],
    ...['--sink', sink.address, '--sink-tls-ca', ca.cert, ...toSink],
  ]);
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
      tokenFile: credentials.workerTokenFiles['worker-a']!,
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
