// `fencer toxiproxy` as a real process: ready line, API, --config, SIGTERM,
// and a one-line error for a bad flag.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runFencer, startFencer, stopFencer, tempDir } from '@fencer/testkit';

const dir = tempDir('fencer-toxiproxy-');
afterAll(() => dir.remove());

it('prints its ready line, serves the API, populates from --config and exits 0 on SIGTERM', async () => {
  const config = join(dir.path, 'proxies.json');
  writeFileSync(config, JSON.stringify([{ name: 'from-config', listen: '127.0.0.1:0', upstream: '127.0.0.1:9' }]));
  const fencer = await startFencer(['toxiproxy', '--listen', '127.0.0.1:0', '--config', config]);
  try {
    expect(fencer.ready).toMatchObject({ event: 'ready', service: 'toxiproxy' });
    expect(fencer.address).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    const version = await fetch(`http://${fencer.address}/version`);
    expect(await version.text()).toBe('{"version": "2.12.0"}\n');
    const proxies = (await (await fetch(`http://${fencer.address}/proxies`)).json()) as Record<
      string,
      { listen: string }
    >;
    expect(proxies['from-config']?.listen).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    for (const line of fencer.stderr().trim().split('\n')) expect(() => JSON.parse(line) as unknown).not.toThrow();
  } finally {
    await stopFencer(fencer);
  }
  expect(await fencer.exited).toEqual({ code: 0, signal: null });
});

it.each([[['--listen', 'nowhere']], [['--listen', '127.0.0.1:99999']]])(
  'rejects %j with a one-line error and a non-zero exit',
  async (args) => {
    const result = await runFencer(['toxiproxy', ...args]);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(args[1]!);
  },
);

it('fails to start with a one-line error when the API address is taken', async () => {
  const first = await startFencer(['toxiproxy', '--listen', '127.0.0.1:0']);
  try {
    const result = await runFencer(['toxiproxy', '--listen', first.address]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n').at(-1)).toBe(
      `fencer toxiproxy: cannot serve the Toxiproxy API on ${first.address}: EADDRINUSE`,
    );
  } finally {
    await stopFencer(first);
  }
});
