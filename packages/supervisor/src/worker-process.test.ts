// startWorker with a real `fencer worker` answering clock probes (the one
// command that needs no service): its supervisor keeps only the latest
// events, so an hour-long soak does not hold every line a worker printed,
// and next() still finds what arrives after the oldest were let go.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_KEPT_EVENTS, startWorker, type WorkerProcess } from './worker-process.js';

const started: WorkerProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((worker) => worker.stop()));
});

// Nothing listens there: a clock probe is answered without a call.
const start = async (keptEvents?: number) => {
  const worker = await startWorker({
    coordinator: '127.0.0.1:1',
    sink: '127.0.0.1:1',
    owner: 'worker-a',
    args: ['--commands'],
    ...(keptEvents === undefined ? {} : { keptEvents }),
  });
  started.push(worker);
  return worker;
};

/** Sends probes `from`..`to` in one write and waits for the last answer. */
const probe = async (worker: WorkerProcess, from: number, to: number) => {
  const lines = Array.from({ length: to - from + 1 }, (_, i) => `clock ${from + i}\n`).join('');
  worker.send(lines.slice(0, -1));
  await worker.next('clock', { where: (e) => e.probe === String(to), timeoutMs: 60_000 });
};

const probes = (worker: WorkerProcess) => worker.events.flatMap((e) => (e.event === 'clock' ? [Number(e.probe)] : []));

describe('startWorker', () => {
  it('keeps only the latest keptEvents events, and next() finds what comes after', async () => {
    const worker = await start(10);
    await probe(worker, 1, 50);
    expect(probes(worker)).toEqual([41, 42, 43, 44, 45, 46, 47, 48, 49, 50]);
    // The cursor moved with the trimmed events: the next probe is found, not one let go.
    worker.send('clock 51');
    expect((await worker.next('clock')).probe).toBe('51');
    expect(worker.events).toHaveLength(10);
  });

  it(`keeps ${DEFAULT_KEPT_EVENTS} events unless told otherwise`, { timeout: 90_000 }, async () => {
    const worker = await start();
    const total = DEFAULT_KEPT_EVENTS + 100;
    await probe(worker, 1, total);
    expect(worker.events).toHaveLength(DEFAULT_KEPT_EVENTS);
    expect(probes(worker)[0]).toBe(total - DEFAULT_KEPT_EVENTS + 1);
  });

  it('refuses a keptEvents that is not a positive integer', async () => {
    await expect(start(0)).rejects.toThrow('keptEvents must be a positive integer, not 0');
  });
});
