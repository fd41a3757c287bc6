// runUntilSignal and announceReady in real child processes (they own
// `process`), built from the kit's dist like every process test: signals
// during start-up, a stop that hangs, and how a failed start explains itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const KIT = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const CLI_KIT = fileURLToPath(new URL('../../cli-kit/dist/index.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fencer-lifecycle-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs a server process whose `start` is `startBody` (it may await `go`, a
 * promise resolved by a line on stdin) and whose stop runs `stopBody`.
 */
function serverProcess(name: string, startBody: string, stopBody = '') {
  const path = join(dir, `${name}.mjs`);
  writeFileSync(
    path,
    `
    import { createInterface } from 'node:readline';
    import { createLogger, runUntilSignal } from ${JSON.stringify(KIT)};
    import { announceReady, StartupError } from ${JSON.stringify(CLI_KIT)};
    const go = new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
    await runUntilSignal('t', createLogger('t'), async () => {
      ${startBody}
      // A real server's listening socket keeps the process alive until its
      // stop; without one, a process that has just started could exit 0 on
      // its own before a SIGTERM already sent to it is handled.
      const listening = setInterval(() => {}, 60_000);
      announceReady('t', '127.0.0.1:1');
      return { stop: async () => { ${stopBody}; clearInterval(listening); } };
    });
  `,
  );
  const child = spawn(process.execPath, [path], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const waiters: { text: () => string; needle: string; resolve: () => void }[] = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      if (waiter.text().includes(waiter.needle)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  child.stdout.on('data', (chunk: Buffer) => ((stdout += chunk.toString()), check()));
  child.stderr.on('data', (chunk: Buffer) => ((stderr += chunk.toString()), check()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const seen = (stream: 'stdout' | 'stderr', needle: string) =>
    new Promise<void>((resolve) => {
      waiters.push({ text: () => (stream === 'stdout' ? stdout : stderr), needle, resolve });
      check();
    });
  return { child, exited, seen, stdout: () => stdout, stderr: () => stderr };
}

const plainLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter((line) => line && !line.startsWith('{'));
const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('runUntilSignal', () => {
  it('a SIGTERM while still starting is honoured once started: a clean stop, exit 0', async () => {
    const server = serverProcess(
      'term-while-starting',
      `process.stdout.write('starting\\n'); await go;`,
      `process.stdout.write('stopped\\n');`,
    );
    await server.seen('stdout', 'starting');
    server.child.kill('SIGTERM');
    server.child.stdin.end('go\n');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stdout()).toContain('stopped');
  });

  it('a second Ctrl-C during a stop that hangs exits 1 at once; a SIGTERM does not', async () => {
    const server = serverProcess('hung-stop', '', 'await new Promise(() => {});');
    await server.seen('stdout', '"event":"ready"');
    server.child.kill('SIGINT');
    await server.seen('stderr', '"msg":"stopping"');
    server.child.kill('SIGTERM'); // a supervisor's follow-up: ignored while stopping
    await server.seen('stderr', 'already stopping');
    expect(server.child.exitCode).toBeNull();
    server.child.kill('SIGINT');
    expect(await server.exited).toEqual({ code: 1, signal: null });
  }, 10_000);

  it('a StartupError is one plain line, `fencer <service>: <message>`, and exit 1', async () => {
    const server = serverProcess('startup-error', `throw new StartupError('cannot listen on 127.0.0.1:1: in use');`);
    expect((await server.exited).code).toBe(1);
    expect(plainLines(server.stderr())).toEqual(['fencer t: cannot listen on 127.0.0.1:1: in use']);
    expect(jsonLines(server.stderr()).filter((line) => (line.level as number) >= 50)).toEqual([]);
  });

  it('any other start-up failure is a bug: the same one line, and its stack in the log', async () => {
    const server = serverProcess('bug', `throw new TypeError('x is not a function');`);
    expect((await server.exited).code).toBe(1);
    expect(plainLines(server.stderr())).toEqual(['fencer t: x is not a function']);
    expect(jsonLines(server.stderr())).toContainEqual(
      expect.objectContaining({
        level: 50,
        err: expect.objectContaining({ stack: expect.stringContaining('TypeError') }),
      }),
    );
  });
});
