// spawnReady with small real child processes: it finds the ready line among
// any other output, explains a failed start with the end of the child's
// stderr, and never leaves a child running behind a rejection.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fencerBin } from './fencer-bin.js';
import { isProcessAlive, processesMentioning, spawnReady } from './spawn.js';

const dir = mkdtempSync(join(tmpdir(), 'fencer-spawn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a child script; it runs until killed unless it exits itself. */
function script(name: string, body: string): string {
  const path = join(dir, `${name}.mjs`);
  writeFileSync(path, `${body}\nsetInterval(() => {}, 60_000);\n`);
  return path;
}

const READY = `process.stdout.write(JSON.stringify({ event: 'ready', service: 't', address: '127.0.0.1:1' }) + '\\n');`;
const PID_ON_STDERR = `process.stderr.write('pid ' + process.pid + '\\n');`;

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a rejection');
}

const pidIn = (text: string) => Number(/pid (\d+)/.exec(text)![1]);

describe('spawnReady', () => {
  it('skips every other stdout line, JSON or not, even null', async () => {
    const child = await spawnReady(
      script(
        'noisy',
        `
      for (const line of ['hello', 'null', '42', '"text"', '[1]', '{"event":"ready"}', '{"event":"started","address":"x"}']) console.log(line);
      ${READY}`,
      ),
      [],
    );
    expect(child.ready).toEqual({ event: 'ready', service: 't', address: '127.0.0.1:1' });
    child.child.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');
  });

  it('a child that exits first is explained by the end of its stderr, however much came before', async () => {
    const message = await rejection(
      spawnReady(
        script(
          'fails',
          `
      for (let i = 0; i < 2000; i++) process.stderr.write('{"level":30,"msg":"noise ${'x'.repeat(60)}"}\\n');
      process.stderr.write('fencer t: cannot listen on 127.0.0.1:1\\n', () => process.exit(1));`,
        ),
        ['t'],
      ),
    );
    expect(message).toMatch(/^t exited \(code 1, signal null\) before it was ready/);
    expect(message.trimEnd().split('\n').at(-1)).toBe('fencer t: cannot listen on 127.0.0.1:1');
  });

  it('a child not ready in time is killed before the promise rejects', async () => {
    // Found by its command line, not by anything it prints: on a loaded
    // machine the bound may pass before the child has said a word.
    const slow = script('slow', '');
    const message = await rejection(spawnReady(slow, ['slow'], { timeoutMs: 300 }));
    expect(message).toMatch(/^slow was not ready within 300 ms/);
    expect(processesMentioning(slow)).toEqual([]);
  });

  it('an abort stops a starting child before the promise rejects', async () => {
    const abort = new AbortController();
    let stderr = '';
    const starting = spawnReady(script('starting', PID_ON_STDERR), ['starting'], {
      signal: abort.signal,
      onStderr: (text) => {
        stderr += text;
        if (stderr.includes('\n')) abort.abort();
      },
    });
    expect(await rejection(starting)).toMatch(/^starting was stopped before it was ready/);
    expect(isProcessAlive(pidIn(stderr))).toBe(false);
  });

  it('an abort after the ready line leaves the child alone', async () => {
    const abort = new AbortController();
    const child = await spawnReady(script('stays', READY), [], { signal: abort.signal });
    abort.abort();
    expect(child.child.killed).toBe(false); // set by any kill() that sent a signal
    child.child.kill('SIGKILL');
    await child.exited;
  });

  it('hands stderr over as whole characters even when a write splits one', async () => {
    let stderr = '';
    const child = await spawnReady(
      script(
        'split',
        `
      process.stderr.write(Buffer.from([0xc3]), () => setTimeout(() => process.stderr.write(Buffer.from([0xa9, 0x0a]), () => { ${READY} }), 50));`,
      ),
      [],
      {
        onStderr: (text) => (stderr += text),
      },
    );
    child.child.kill('SIGKILL');
    await child.exited;
    expect(stderr).toBe('é\n');
  });

  it('a fencer server stops cleanly once its supervisor is gone (its stdin closes)', async () => {
    let stderr = '';
    const sink = await spawnReady(
      fencerBin(),
      ['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir, 'orphan')],
      {
        onStderr: (text) => (stderr += text),
      },
    );
    sink.child.stdin!.end(); // what the OS does when a supervisor dies, even by SIGKILL
    const exited = await Promise.race([
      sink.exited,
      new Promise((resolve) => setTimeout(resolve, 10_000, 'still running')),
    ]);
    if (exited === 'still running') sink.child.kill('SIGKILL'); // leave nothing behind when the feature is broken
    expect(exited).toEqual({ code: 0, signal: null });
    expect(stderr).toContain('the supervising process is gone; stopping');
    expect(stderr).toContain('"msg":"stopped"');
  });
});
