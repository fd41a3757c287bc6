// `fencer conformance` against this project's own services as real
// processes: a secured cluster (sink + LevelDB coordinator, the servers'
// credentials file, restart commands that SIGKILL them) holds every rule it
// checks but P4, H2 and H7, which it skips with one sink and one
// coordinator; an --insecure coordinator over two sinks holds P4 too. The
// outputs (table, --json, --junit) and its one-line flag errors.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runFencer,
  serveRestartCommands,
  startFencer,
  startTestCluster,
  stopFencer,
  tempDir,
  type FencerProcess,
  type RestartCommands,
} from '@fencer/testkit';
import type { Cluster } from '@fencer/supervisor';
import { RULES } from '../src/index.js';

let cluster: Cluster;
let stopCluster: () => Promise<void>;
let restarts: RestartCommands;
const dir = tempDir('fencer-conformance-');
const children: FencerProcess[] = [];

beforeAll(async () => {
  ({ cluster, stop: stopCluster } = await startTestCluster('fencer-conformance-cluster-'));
  const crash = (service: 'sink' | 'coordinator') => async () => {
    await cluster.kill(service);
    await cluster.restart(service);
  };
  restarts = await serveRestartCommands({ sink: crash('sink'), coordinator: crash('coordinator') });
}, 60_000);

afterAll(async () => {
  await restarts?.close();
  await Promise.all(children.map((child) => stopFencer(child, 1_000)));
  await stopCluster?.();
  dir.remove();
});

type Row = { rule: string; status: string; detail: string };

/** `fencer conformance` pointed at the secured cluster, with its credentials. */
const kitAgainstCluster = () => [
  'conformance',
  '--coordinator',
  cluster.coordinator.ready.address,
  '--sink',
  cluster.sink.ready.address,
  '--credentials',
  cluster.credentials!.credentialsFile,
];

describe('fencer conformance', () => {
  it('a secured sink and LevelDB coordinator hold every rule checked, across SIGKILLs; P4, H2, H7 are skipped', async () => {
    const junit = join(dir.path, 'secured.xml');
    const run = await runFencer([
      ...kitAgainstCluster(),
      '--sink-restart-cmd',
      restarts.command('sink'),
      '--coordinator-restart-cmd',
      restarts.command('coordinator'),
      '--json',
      '--junit',
      junit,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as Row[];
    expect(rows.map((row) => row.rule)).toEqual(RULES);
    // One sink (P4), one coordinator (H2, H7). L7, R3 and F6 ran their restarts.
    const skipped = ['P4', 'H2', 'H7'];
    for (const row of rows) {
      expect(row, row.rule).toMatchObject({ status: skipped.includes(row.rule) ? 'skipped' : 'held' });
    }
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain(
      `<testsuite name="fencer conformance" tests="${RULES.length}" failures="0" skipped="${skipped.length}">`,
    );
    expect(xml).toMatch(/<testcase classname="fencing.v1" name="P4: [^"]*"><skipped message="needs two sinks/);
  });

  it('over two sinks sharded by resource, P4 holds as well (table output)', async () => {
    const sink = (name: string) =>
      startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir.path, `sink-${name}`)]);
    const [a, b] = await Promise.all([sink('a'), sink('b')]);
    children.push(a, b);
    const coordinator = await startFencer([
      'coordinator',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dir.path, 'coordinator'),
      '--sink',
      `a=${a.address}`,
      '--sink',
      `b=${b.address}`,
    ]);
    children.push(coordinator);
    const run = await runFencer([
      'conformance',
      '--insecure',
      '--coordinator',
      coordinator.address,
      '--sink',
      `${a.address},${b.address}`,
    ]);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/^P4 +held {5}a sink that does not own a resource refuses writes to it/m);
    // --insecure: no identities to tell apart (A2–A5), and no coordinator credential to fence with (F4, T1,
    // AdvanceFenceStream); one coordinator (H2, H7) and no restart commands (L7, R3, F6).
    const skipped = ['F4', 'AdvanceFenceStream', 'A2', 'A3', 'A4', 'A5', 'T1', 'H2', 'H7', 'L7', 'R3', 'F6'];
    for (const rule of skipped) expect(run.stdout).toMatch(new RegExp(`^${rule} +skipped`, 'm'));
    expect(run.stdout.trim().split('\n').at(-1)).toBe(
      `${RULES.length - skipped.length} held, 0 failed, ${skipped.length} skipped`,
    );
  });

  it.each([
    [['--insecure', '--sink', '127.0.0.1:1'], "error: required option '--coordinator <host:port,...>' not specified"],
    [
      ['--coordinator', '127.0.0.1:1', '--sink', '127.0.0.1:1'],
      "error: give either --credentials FILE (the servers' own) or --insecure",
    ],
    [
      ['--insecure', '--coordinator', '127.0.0.1:1', '--sink', '127.0.0.1:1', '--only', 'L3,Z9'],
      `error: option '--only <rules>' argument 'L3,Z9' is invalid. no check of Z9: the rules are ${RULES.join(', ')}`,
    ],
  ])('refuses %j with one line and exit 1', async (args, message) => {
    const { code, stderr } = await runFencer(['conformance', ...args]);
    expect([code, stderr.trim()]).toEqual([1, message]);
  });

  it('ends the run when a restart command fails: exit 2, naming the flag, its exit and last stderr line', async () => {
    const { code, stdout, stderr } = await runFencer([
      ...kitAgainstCluster(),
      '--only',
      'F6',
      '--sink-restart-cmd',
      'echo starting >&2; echo no such unit >&2; exit 3',
    ]);
    expect([code, stdout, stderr.trim()]).toEqual([
      2,
      '',
      'fencer conformance: --sink-restart-cmd exited 3: no such unit',
    ]);
  });

  it('says a deployment that does not answer is no evidence either way: exit 2, one line', async () => {
    const { code, stdout, stderr } = await runFencer([
      'conformance',
      '--insecure',
      '--coordinator',
      '127.0.0.1:1',
      '--sink',
      '127.0.0.1:1',
      '--timeout-ms',
      '500',
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim()).toMatch(
      /^fencer conformance: Acquire of conformance-\w+-job-1 .*got no answer \(UNAVAILABLE/,
    );
  });
});
