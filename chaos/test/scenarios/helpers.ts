// What the named scenarios share: a scenario per test in its own data
// directory, and a scripted write that returns how it ended.
import { afterAll, afterEach } from 'vitest';
import { tempDir } from '@fencer/testkit';
import { Scenario, type ScenarioOptions, type ScenarioWorker } from '../../src/index.js';

const dir = tempDir('fencer-scenario-');
const running = new Set<Scenario>();
afterEach(async () => {
  await Promise.all([...running].map((scenario) => scenario.stop()));
  running.clear();
});
afterAll(() => dir.remove());

/** Starts a scenario that the test's end stops. */
export async function scenario(name: string, options: Omit<ScenarioOptions, 'name' | 'data'> = {}): Promise<Scenario> {
  const started = await Scenario.start({ name, data: `${dir.path}/${name}`, ...options });
  running.add(started);
  return started;
}

/** Sends `write ID PAYLOAD` to a scripted worker and resolves with its `written` or `refused` event. */
export async function write(worker: ScenarioWorker, resultId: string, payload: string) {
  worker.send(`write ${resultId} ${payload}`);
  return worker.next(['written', 'refused']);
}

/** Sends `acquire` and resolves with the token it was granted. */
export async function acquire(worker: ScenarioWorker): Promise<bigint> {
  worker.send('acquire');
  return BigInt((await worker.next('acquired')).token);
}

/** Worker flags of a scripted worker on `resource` with a lease of `ttlMs`. */
export const scripted = (resource: string, ttlMs: number, callTimeoutMs = 500) => [
  '--commands',
  '--resource',
  resource,
  '--ttl-ms',
  String(ttlMs),
  '--call-timeout-ms',
  String(callTimeoutMs),
];

/**
 * Opens a scripted worker's connection to the coordinator before a fault
 * that would stop a new one from finishing its handshake: asks who holds
 * the resource until an answer comes (a first call can time out while the
 * connection is being set up on a loaded machine).
 */
export async function connectFirst(worker: ScenarioWorker): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    worker.send('describe');
    if ((await worker.next(['described', 'refused'])).event === 'described') return;
    if (attempt === 10) throw new Error(`worker ${worker.owner} could not reach the coordinator`);
  }
}
