// docker-compose.yml as Docker Compose reads it (no engine runs here, so
// this is `docker-compose config`, Debian's docker-compose), and the
// secrets it names as `fencer credentials` writes them. The resolved file
// is read as data through PyYAML, which Debian's docker-compose depends on.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
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
  volumes?: string[];
  ports?: string[];
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
/** The value after each `flag` of a repeatable flag, in order. */
const flags = (command: readonly string[], name: string) =>
  command.flatMap((arg, index) => (arg === name ? [command[index + 1]!] : []));

/** The sinks, sharded by resource (P1): every coordinator names them so, with one proxy per replica and sink. */
const SINKS = ['sink-1', 'sink-2'];
/** The port after the last colon of HOST:PORT or a URL. */
const portOf = (address: string) => address.slice(address.lastIndexOf(':') + 1);
/** The owner of `resource` among `names` by docs/PROTOCOL.md's weight (P1), computed here as any implementation would. */
function ownerOf(resource: string, names: readonly string[]): string {
  const weight = (name: string) => createHash('sha256').update(`${name}\u0000${resource}`).digest().readBigUInt64BE(0);
  return [...names].sort().reduce((owner, name) => (weight(name) > weight(owner) ? name : owner));
}

interface ProxySpec {
  name: string;
  listen: string;
  upstream: string;
}
const proxies = () => JSON.parse(readFileSync(join(root, 'deploy/toxiproxy.json'), 'utf8')) as ProxySpec[];
/** The proxy a service dials at toxiproxy:PORT. */
const proxyAt = (address: string) => proxies().find((p) => `toxiproxy:${p.listen.split(':')[1]}` === address);

describe('docker-compose.yml', () => {
  it('is valid Compose with two sinks, three etcd members, two coordinator replicas, a real Toxiproxy and two demo workers', () => {
    compose('config', '-q'); // throws on an invalid file
    expect(compose('config', '--services').trim().split('\n').sort()).toEqual([
      'coordinator-1',
      'coordinator-2',
      'etcd-1',
      'etcd-2',
      'etcd-3',
      'sink-1',
      'sink-2',
      'toxiproxy',
      'worker-a',
      'worker-b',
    ]);
    const services = resolvedServices();
    expect(services.toxiproxy!.image).toBe('ghcr.io/shopify/toxiproxy:2.12.0');
    // The host reaches the workers' proxies (both replicas, both sinks) and the API, nothing else.
    expect(services.toxiproxy!.ports).toEqual(
      ['8474', '60051', '60052', '60054', '60056'].map((port) => `127.0.0.1:${port}:${port}/tcp`),
    );
    // Workers, too, reach every service only through Toxiproxy, each with its own token, and know both replicas (H7)
    // and both sinks: a grant names the sink by the replica's address for it, so a worker finds the owner among its own (P3, P4).
    for (const worker of ['worker-a', 'worker-b']) {
      const { command, depends_on } = services[worker]!;
      expect(flag(command, '--coordinator')).toBe('toxiproxy:60052,toxiproxy:60054');
      expect(
        flag(command, '--sink')!
          .split(',')
          .map((address) => proxyAt(address)),
      ).toEqual(
        SINKS.map((sink, index) => ({
          name: `workers_to_sink_${index + 1}`,
          listen: expect.any(String) as string,
          upstream: `${sink}:50051`,
          enabled: true,
        })),
      );
      expect(flag(command, '--token-file')).toBe(`/run/secrets/${worker.replace('-', '_')}_token`);
      expect(Object.keys(depends_on!).sort()).toEqual(['coordinator-1', 'coordinator-2']);
    }
    // The demo's task lives on sink-2, not on the first address the workers are given: they must look for its owner.
    expect(ownerOf(flag(services['worker-a']!.command, '--resource')!, SINKS)).toBe('sink-2');
  });

  it('P: runs each sink with a volume of its own, listening where its proxies point', () => {
    const services = resolvedServices();
    const volumes = SINKS.map((name) => services[name]!.volumes);
    expect(volumes).toEqual([['sink-1-data:/data:rw'], ['sink-2-data:/data:rw']]);
    for (const name of SINKS) {
      const { image, command, healthcheck } = services[name]!;
      expect(image).toBe('fencer:local');
      expect(command).toEqual([
        'sink',
        '--listen',
        '0.0.0.0:50051',
        '--data',
        '/data',
        '--credentials',
        '/run/secrets/credentials',
      ]);
      expect(healthcheck!.test).toEqual(['CMD', 'node', '/app/cli/bin/fencer.js', 'health', '127.0.0.1:50051']);
      // One proxy per dialer: the workers and each replica.
      expect(
        proxies()
          .filter((p) => p.upstream === `${name}:50051`)
          .map((p) => p.name)
          .sort(),
      ).toEqual(['coordinator_1', 'coordinator_2', 'workers'].map((from) => `${from}_to_sink_${name.split('-')[1]}`));
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

  it("H1, H2: each replica is on etcd, reaching every member through proxies of its own, advertising its workers' proxy", () => {
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
      // NOT_LEADER names this address: the workers' proxy in front of this replica.
      expect(proxyAt(flag(command, '--advertise')!)).toMatchObject({
        name: `workers_to_coordinator_${index}`,
        upstream: `coordinator-${index}:${flag(command, '--listen')!.split(':')[1]}`,
      });
      expect(flag(command, '--sink-token-file')).toBe('/run/secrets/coordinator_token');
      expect(Object.keys(depends_on!).sort()).toEqual(['etcd-1', 'etcd-2', 'etcd-3', 'sink-1', 'sink-2', 'toxiproxy']);
      expect(healthcheck!.test).toEqual(['CMD', 'node', '/app/cli/bin/fencer.js', 'health', '127.0.0.1:50052']);
    }
  });

  it('P1, P2: every replica names both sinks with the same names, each through a proxy of its own', () => {
    const services = resolvedServices();
    const named = [1, 2].map((index) =>
      flags(services[`coordinator-${index}`]!.command, '--sink').map((value) => value.split('=') as [string, string]),
    );
    // The set of names is recorded at first start (P2): a replica given another set would refuse to start.
    for (const sinks of named) expect(sinks.map(([name]) => name)).toEqual(SINKS);
    named.forEach((sinks, replica) => {
      for (const [name, address] of sinks)
        expect(proxyAt(address)).toMatchObject({
          name: `coordinator_${replica + 1}_to_sink_${name.split('-')[1]}`,
          upstream: `${name}:${portOf(flag(services[name]!.command, '--listen')!)}`,
        });
    });
  });

  it('populates one proxy per link, each dialled by a service and pointing where its service listens', () => {
    expect(proxies().map((p) => [p.name, p.listen, p.upstream])).toEqual([
      ['workers_to_sink_1', '0.0.0.0:60051', 'sink-1:50051'],
      ['workers_to_coordinator_1', '0.0.0.0:60052', 'coordinator-1:50052'],
      ['coordinator_1_to_sink_1', '0.0.0.0:60053', 'sink-1:50051'],
      ['workers_to_coordinator_2', '0.0.0.0:60054', 'coordinator-2:50052'],
      ['coordinator_2_to_sink_1', '0.0.0.0:60055', 'sink-1:50051'],
      ['workers_to_sink_2', '0.0.0.0:60056', 'sink-2:50051'],
      ['coordinator_1_to_sink_2', '0.0.0.0:60057', 'sink-2:50051'],
      ['coordinator_2_to_sink_2', '0.0.0.0:60058', 'sink-2:50051'],
      ['coordinator_1_to_etcd_1', '0.0.0.0:60061', 'etcd-1:2379'],
      ['coordinator_1_to_etcd_2', '0.0.0.0:60062', 'etcd-2:2379'],
      ['coordinator_1_to_etcd_3', '0.0.0.0:60063', 'etcd-3:2379'],
      ['coordinator_2_to_etcd_1', '0.0.0.0:60071', 'etcd-1:2379'],
      ['coordinator_2_to_etcd_2', '0.0.0.0:60072', 'etcd-2:2379'],
      ['coordinator_2_to_etcd_3', '0.0.0.0:60073', 'etcd-3:2379'],
    ]);
    const services = resolvedServices();
    // Every toxiproxy:PORT any service dials, and every proxy, once: no proxy unused, no address without a proxy.
    const dialled = Object.values(services).flatMap(({ command }) =>
      (command ?? []).flatMap((arg) => arg.split(/[,=]/)).filter((part) => part.startsWith('toxiproxy:')),
    );
    const listens = proxies().map((p) => `toxiproxy:${portOf(p.listen)}`);
    expect([...new Set(dialled)].sort()).toEqual([...listens].sort());
    expect(new Set(listens).size).toBe(listens.length);
    // Each upstream is a service of the file, on the port that service listens on.
    for (const { upstream } of proxies()) {
      const [host, port] = upstream.split(':') as [string, string];
      const { command, environment } = services[host]!;
      const listen = host.startsWith('etcd-') ? environment!.ETCD_LISTEN_CLIENT_URLS! : flag(command, '--listen')!;
      expect(portOf(listen), upstream).toBe(port);
    }
    // The replicas' links to coordinators and etcd carry the names `fencer cluster --replicas 2` gives them.
    for (const index of [1, 2]) {
      const { workersToCoordinator, coordinatorToEtcd } = replicaProxyNames(index, 3);
      for (const name of [workersToCoordinator, ...coordinatorToEtcd])
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
