// docker-compose.yml as Docker Compose reads it (no engine runs here, so
// this is `docker-compose config`, Debian's docker-compose), and the
// secrets it names as `fencer credentials` writes them. The resolved file
// is read as data through PyYAML, which Debian's docker-compose depends on.
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { replicaProxyNames } from '@fencer/supervisor';
import { runFencer, tempDir } from '@fencer/testkit';

const root = fileURLToPath(new URL('../..', import.meta.url));
const compose = (...args: string[]) =>
  execFileSync('docker-compose', ['-f', join(root, 'docker-compose.yml'), ...args], { encoding: 'utf8' });
const dir = tempDir('fencer-compose-');
afterAll(() => dir.remove());

interface ComposeService {
  image: string;
  command: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

let parsedServices: Record<string, ComposeService> | undefined;
/** Every service of the file as `docker-compose config` resolves it (anchors merged, paths absolute); read once. */
function resolvedServices(): Record<string, ComposeService> {
  if (parsedServices) return parsedServices;
  const json = execFileSync('python3', ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'], {
    input: compose('config'),
    encoding: 'utf8',
  });
  return (parsedServices = (JSON.parse(json) as { services: Record<string, ComposeService> }).services);
}

/** The value after `flag` in a command line. */
const flag = (command: readonly string[], name: string) => command[command.indexOf(name) + 1];

interface ProxySpec {
  name: string;
  listen: string;
  upstream: string;
}
const proxies = () => JSON.parse(readFileSync(join(root, 'deploy/toxiproxy.json'), 'utf8')) as ProxySpec[];
/** The proxy a service dials at toxiproxy:PORT. */
const proxyAt = (address: string) => proxies().find((p) => `toxiproxy:${p.listen.split(':')[1]}` === address);

describe('docker-compose.yml', () => {
  it('is valid Compose with the sink, three etcd members, two coordinator replicas, a real Toxiproxy and two demo workers', () => {
    compose('config', '-q'); // throws on an invalid file
    expect(compose('config', '--services').trim().split('\n').sort()).toEqual([
      'coordinator-1',
      'coordinator-2',
      'etcd-1',
      'etcd-2',
      'etcd-3',
      'sink',
      'toxiproxy',
      'worker-a',
      'worker-b',
    ]);
    const services = resolvedServices();
    expect(services.toxiproxy!.image).toBe('ghcr.io/shopify/toxiproxy:2.12.0');
    expect(services.sink!.healthcheck!.test).toEqual([
      'CMD',
      'node',
      '/app/cli/bin/fencer.js',
      'health',
      '127.0.0.1:50051',
    ]);
    // Workers, too, reach every service only through Toxiproxy, each with its own token, and know both replicas (H7).
    for (const worker of ['worker-a', 'worker-b']) {
      const { command, depends_on } = services[worker]!;
      expect(flag(command, '--coordinator')).toBe('toxiproxy:60052,toxiproxy:60054');
      expect(flag(command, '--sink')).toBe('toxiproxy:60051');
      expect(flag(command, '--token-file')).toBe(`/run/secrets/${worker.replace('-', '_')}_token`);
      expect(Object.keys(depends_on!).sort()).toEqual(['coordinator-1', 'coordinator-2']);
    }
  });

  it('runs three etcd members of one cluster from the pinned official image, with lease checkpointing', () => {
    const services = resolvedServices();
    for (const name of ['etcd-1', 'etcd-2', 'etcd-3']) {
      const etcd = services[name]!;
      expect(etcd.image).toBe('gcr.io/etcd-development/etcd:v3.4.23');
      // Without the checkpoint flags an etcd leader change restarts lease TTLs; 3.4.23 then panics without zap.
      expect(etcd.command).toEqual([
        '/usr/local/bin/etcd',
        '--experimental-enable-lease-checkpoint',
        '--experimental-enable-lease-checkpoint-persist',
        '--logger',
        'zap',
      ]);
      expect(etcd.environment).toMatchObject({
        ETCD_NAME: name,
        ETCD_ADVERTISE_CLIENT_URLS: `http://${name}:2379`,
        ETCD_INITIAL_ADVERTISE_PEER_URLS: `http://${name}:2380`,
        ETCD_INITIAL_CLUSTER: 'etcd-1=http://etcd-1:2380,etcd-2=http://etcd-2:2380,etcd-3=http://etcd-3:2380',
      });
      expect(etcd.healthcheck!.test).toEqual([
        'CMD',
        '/usr/local/bin/etcdctl',
        '--endpoints=http://127.0.0.1:2379',
        'endpoint',
        'health',
      ]);
    }
  });

  it("H1, H2: each replica is on etcd, reaching the sink and every member through proxies of its own, advertising its workers' proxy", () => {
    const services = resolvedServices();
    for (const index of [1, 2]) {
      const { command, depends_on, healthcheck } = services[`coordinator-${index}`]!;
      expect(command.slice(0, 1)).toEqual(['coordinator']);
      expect(flag(command, '--store')).toBe('etcd');
      expect(
        flag(command, '--etcd')!
          .split(',')
          .map((address) => proxyAt(address)),
      ).toEqual(
        [1, 2, 3].map((member) => ({
          name: `coordinator_${index}_to_etcd_${member}`,
          listen: expect.any(String) as string,
          upstream: `etcd-${member}:2379`,
          enabled: true,
        })),
      );
      expect(proxyAt(flag(command, '--sink')!)).toMatchObject({
        name: `coordinator_${index}_to_sink`,
        upstream: 'sink:50051',
      });
      // NOT_LEADER names this address: the workers' proxy in front of this replica.
      expect(proxyAt(flag(command, '--advertise')!)).toMatchObject({
        name: `workers_to_coordinator_${index}`,
        upstream: `coordinator-${index}:${flag(command, '--listen')!.split(':')[1]}`,
      });
      expect(flag(command, '--sink-token-file')).toBe('/run/secrets/coordinator_token');
      expect(Object.keys(depends_on!).sort()).toEqual(['etcd-1', 'etcd-2', 'etcd-3', 'sink', 'toxiproxy']);
      expect(healthcheck!.test).toEqual(['CMD', 'node', '/app/cli/bin/fencer.js', 'health', '127.0.0.1:50052']);
    }
  });

  it('populates one proxy per link, named as fencer cluster --replicas 2 names them', () => {
    expect(proxies().map((p) => [p.name, p.listen, p.upstream])).toEqual([
      ['workers_to_sink', '0.0.0.0:60051', 'sink:50051'],
      ['workers_to_coordinator_1', '0.0.0.0:60052', 'coordinator-1:50052'],
      ['coordinator_1_to_sink', '0.0.0.0:60053', 'sink:50051'],
      ['workers_to_coordinator_2', '0.0.0.0:60054', 'coordinator-2:50052'],
      ['coordinator_2_to_sink', '0.0.0.0:60055', 'sink:50051'],
      ['coordinator_1_to_etcd_1', '0.0.0.0:60061', 'etcd-1:2379'],
      ['coordinator_1_to_etcd_2', '0.0.0.0:60062', 'etcd-2:2379'],
      ['coordinator_1_to_etcd_3', '0.0.0.0:60063', 'etcd-3:2379'],
      ['coordinator_2_to_etcd_1', '0.0.0.0:60071', 'etcd-1:2379'],
      ['coordinator_2_to_etcd_2', '0.0.0.0:60072', 'etcd-2:2379'],
      ['coordinator_2_to_etcd_3', '0.0.0.0:60073', 'etcd-3:2379'],
    ]);
    const names = (index: number) => replicaProxyNames(index, 3);
    for (const index of [1, 2]) {
      const { workersToCoordinator, coordinatorToSink, coordinatorToEtcd } = names(index);
      for (const name of [workersToCoordinator, coordinatorToSink, ...coordinatorToEtcd])
        expect(proxies().map((p) => p.name)).toContain(name);
    }
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
