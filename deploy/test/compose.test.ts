// docker-compose.yml as Docker Compose reads it (no engine runs here, so
// this is `docker-compose config`, Debian's docker-compose), and the
// secrets it names as `fencer credentials` writes them.
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runFencer, tempDir } from '@fencer/testkit';

const root = fileURLToPath(new URL('../..', import.meta.url));
const compose = (...args: string[]) =>
  execFileSync('docker-compose', ['-f', join(root, 'docker-compose.yml'), ...args], { encoding: 'utf8' });
const dir = tempDir('fencer-compose-');
afterAll(() => dir.remove());

describe('docker-compose.yml', () => {
  it('is valid Compose with the sink, the coordinator, a real Toxiproxy and two demo workers', () => {
    compose('config', '-q'); // throws on an invalid file
    expect(compose('config', '--services').trim().split('\n').sort()).toEqual([
      'coordinator',
      'sink',
      'toxiproxy',
      'worker-a',
      'worker-b',
    ]);
    const resolved = compose('config');
    expect(resolved).toContain('image: ghcr.io/shopify/toxiproxy:2.12.0');
    // Every link goes through Toxiproxy: the coordinator reaches the sink on a proxy.
    expect(resolved).toContain('toxiproxy:60053');
    expect(resolved).toContain('- /app/cli/bin/fencer.js\n      - health\n      - 127.0.0.1:50051');
    // Workers, too, reach both services only through Toxiproxy, each with its own token.
    for (const worker of ['worker-a', 'worker-b']) {
      const section = resolved.slice(resolved.indexOf(`  ${worker}:`));
      expect(section).toContain('- toxiproxy:60052');
      expect(section).toContain('- toxiproxy:60051');
      expect(section).toContain(`- /run/secrets/${worker.replace('-', '_')}_token`);
    }
  });

  it('populates one proxy per link, each pointing at the service behind it', () => {
    const proxies = JSON.parse(readFileSync(join(root, 'deploy/toxiproxy.json'), 'utf8')) as {
      name: string;
      listen: string;
      upstream: string;
    }[];
    expect(proxies.map((p) => [p.name, p.listen, p.upstream])).toEqual([
      ['workers_to_coordinator', '0.0.0.0:60052', 'coordinator:50052'],
      ['workers_to_sink', '0.0.0.0:60051', 'sink:50051'],
      ['coordinator_to_sink', '0.0.0.0:60053', 'sink:50051'],
    ]);
  });

  it('takes its secrets from the files `fencer credentials` writes (mode 0600, kept on a second run)', async () => {
    const secrets = join(dir.path, 'secrets');
    const first = await runFencer(['credentials', secrets]);
    expect(first.code).toBe(0);
    const written = first.stdout.trim().split('\n');
    expect(written).toEqual(
      ['credentials.json', 'coordinator.token', 'worker-a.token', 'worker-b.token'].map((name) => join(secrets, name)),
    );
    for (const file of written) expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = readFileSync(written[1]!, 'utf8');
    expect((await runFencer(['credentials', secrets])).code).toBe(0);
    expect(readFileSync(written[1]!, 'utf8')).toBe(token);
    const resolved = compose('config');
    for (const name of ['credentials.json', 'coordinator.token', 'worker-a.token', 'worker-b.token'])
      expect(resolved).toContain(join(root, 'deploy/secrets', name));
  });
});
