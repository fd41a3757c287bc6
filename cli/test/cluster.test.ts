// `fencer cluster` as a user and a supervisor meet it: two real child
// processes started, stopped, explained when they fail, and never left behind.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, runFencer, startFencer, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';
import { fencerBin, isProcessAlive, processesMentioning } from '@fencer/supervisor';

const dir = tempDir('fencer-cluster-');
afterAll(() => dir.remove());

const clusterArgs = (data: string) => [
  'cluster',
  '--data',
  data,
  '--sink-listen',
  '127.0.0.1:0',
  '--coordinator-listen',
  '127.0.0.1:0',
];
const pidsOf = (cluster: FencerProcess) => cluster.ready.pids as { sink: number; coordinator: number };

describe('fencer cluster', () => {
  it('fails with a clear message and stops what it started when a port is taken', async () => {
    const blocker = await startFencer([
      'sink',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dir.path, 'blocker'),
    ]);
    const data = join(dir.path, 'busy');
    const result = await runFencer([
      'cluster',
      '--data',
      data,
      '--sink-listen',
      '127.0.0.1:0',
      '--coordinator-listen',
      blocker.address,
    ]);
    await stopFencer(blocker);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the coordinator did not start: fencer coordinator: cannot listen on');
    expect(processesMentioning(data)).toEqual([]); // the sink it had started is gone
  });
});

describe('fencer cluster, as a user meets it', () => {
  it("A1: FENCER_CLUSTER_INSECURE=false keeps authentication on; a supervisor's SIGTERM stops all three cleanly", async () => {
    const data = join(dir.path, 'env-false');
    const cluster = await startFencer(clusterArgs(data), { env: { FENCER_CLUSTER_INSECURE: 'false' } });
    const { sink, coordinator } = pidsOf(cluster);
    await stopFencer(cluster);
    expect((await cluster.exited).code).toBe(0);
    expect([isProcessAlive(sink), isProcessAlive(coordinator)]).toEqual([false, false]);
    expect(existsSync(join(data, 'credentials.json'))).toBe(true);
  });

  it('a data path that is a file is a one-line error, not a stack trace', async () => {
    const file = join(dir.path, 'a-file');
    writeFileSync(file, 'x');
    const result = await runFencer(clusterArgs(file));
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^error: cannot use /);
  });

  it('a child that cannot start is explained with its own reason', async () => {
    const blocker = await startFencer([
      'sink',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dir.path, 'blocker2'),
    ]);
    const result = await runFencer([
      'cluster',
      '--data',
      join(dir.path, 'busy2'),
      '--sink-listen',
      blocker.address,
      '--coordinator-listen',
      '127.0.0.1:0',
    ]);
    await stopFencer(blocker);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`fencer sink: cannot listen on ${blocker.address}`);
  });

  it('regenerates a missing coordinator token from the credentials file', async () => {
    const data = join(dir.path, 'token-gone');
    await stopFencer(await startFencer(clusterArgs(data)));
    const token = readFileSync(join(data, 'coordinator.token'), 'utf8');
    rmSync(join(data, 'coordinator.token'));
    await stopFencer(await startFencer(clusterArgs(data)));
    expect(readFileSync(join(data, 'coordinator.token'), 'utf8')).toBe(token);
  });

  it('A2: SIGHUP to the cluster reaches both services, which reload the credentials and keep running', async () => {
    const data = join(dir.path, 'hangup');
    const cluster = await startFencer(clusterArgs(data));
    try {
      cluster.kill('SIGHUP');
      for (const service of ['sink', 'coordinator'])
        await eventually(
          () =>
            readFileSync(join(data, 'logs', `${service}.log`), 'utf8').includes('"credentials reloaded"')
              ? true
              : undefined,
          { what: `the ${service}'s reload` },
        );
      const { sink, coordinator } = pidsOf(cluster);
      expect([isProcessAlive(sink), isProcessAlive(coordinator)]).toEqual([true, true]);
    } finally {
      await stopFencer(cluster);
    }
    expect((await cluster.exited).code).toBe(0);
  });
});

describe('fencer cluster supervising its children', () => {
  it('children do not outlive a cluster killed with SIGKILL', async () => {
    const cluster = await startFencer(clusterArgs(join(dir.path, 'cluster-killed')));
    const { sink, coordinator } = pidsOf(cluster);
    cluster.kill('SIGKILL');
    await cluster.exited;
    try {
      await eventually(() => (isProcessAlive(sink) || isProcessAlive(coordinator) ? undefined : true), {
        what: 'the sink and the coordinator to stop after their supervisor died',
      });
    } finally {
      for (const pid of [sink, coordinator]) if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('a child that dies stops the other, and the cluster exits 1', async () => {
    const cluster = await startFencer(clusterArgs(join(dir.path, 'child-dies')));
    const { sink, coordinator } = pidsOf(cluster);
    process.kill(sink, 'SIGKILL');
    expect((await cluster.exited).code).toBe(1);
    expect(cluster.stderr()).toContain('the sink exited (code null, signal SIGKILL)');
    expect(isProcessAlive(coordinator)).toBe(false);
  });

  it('a child that will not stop is killed after --stop-grace-ms, and the cluster exits 1', async () => {
    const cluster = await startFencer([...clusterArgs(join(dir.path, 'child-hangs')), '--stop-grace-ms', '300']);
    const { sink, coordinator } = pidsOf(cluster);
    process.kill(coordinator, 'SIGSTOP'); // deaf to SIGTERM until killed
    cluster.kill('SIGTERM');
    expect((await cluster.exited).code).toBe(1);
    expect(isProcessAlive(coordinator)).toBe(false);
    expect(isProcessAlive(sink)).toBe(false);
  });

  it('runs sink and coordinator as separate processes; Ctrl-C at a terminal (SIGINT to the whole group) stops all three cleanly', async () => {
    // A process group of its own stands in for the terminal's foreground group.
    const cluster = spawn(process.execPath, [fencerBin(), ...clusterArgs(join(dir.path, 'ctrl-c'))], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const exited = new Promise<number | null>((resolve) => cluster.once('exit', (code) => resolve(code)));
    let stdout = '';
    cluster.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    const ready = await eventually(() => stdout.split('\n').find((line) => line.includes('"service":"cluster"')), {
      what: 'the cluster ready line',
    });
    const line = JSON.parse(ready) as {
      address: string;
      sink: string;
      coordinator: string;
      pids: { sink: number; coordinator: number };
    };
    expect(line.address).toBe(line.coordinator);
    expect(line.sink).not.toBe(line.coordinator);
    const { pids } = line;
    expect(new Set([pids.sink, pids.coordinator, cluster.pid]).size).toBe(3);
    process.kill(-cluster.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    expect([isProcessAlive(pids.sink), isProcessAlive(pids.coordinator)]).toEqual([false, false]);
  });

  it('a stop while the coordinator is still starting leaves no process behind', async () => {
    const data = join(dir.path, 'stop-while-starting');
    const cluster = spawn(process.execPath, [fencerBin(), ...clusterArgs(data)], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => cluster.once('exit', (code) => resolve(code)));
    // The coordinator is spawned the moment the sink is ready.
    await eventually(() =>
      existsSync(join(data, 'logs', 'sink.log')) &&
      readFileSync(join(data, 'logs', 'sink.log'), 'utf8').includes('"msg":"sink ready"')
        ? true
        : undefined,
    );
    cluster.kill('SIGTERM');
    await exited;
    expect(processesMentioning(data)).toEqual([]);
  });
});
