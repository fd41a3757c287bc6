// A real etcd for tests (H1): one member on loopback in a temporary
// directory of its own, from the `etcd` on PATH (.ci/run installs it).
import { join } from 'node:path';
import { etcdHosts, startEtcdCluster, type EtcdCluster } from '@fencer/supervisor';
import { tempDir } from './waiting.js';

/** A one-member etcd started by startTestEtcd. */
export interface TestEtcd {
  readonly cluster: EtcdCluster;
  /** Its client address (HOST:PORT), as `--etcd` takes it. */
  readonly endpoint: string;
  /** etcd3's `hosts` option for it (with the scheme). */
  readonly hosts: string[];
  /** Stops etcd and removes its directory; call it in the test's afterAll/afterEach. */
  stop(): Promise<void>;
}

/** Starts a one-member etcd in a fresh temporary directory (data and log); rejects, naming its log, if it does not serve. */
export async function startTestEtcd(): Promise<TestEtcd> {
  const dir = tempDir('fencer-etcd-');
  let cluster: EtcdCluster;
  try {
    cluster = await startEtcdCluster({ members: 1, dataDir: join(dir.path, 'data'), logDir: dir.path });
  } catch (error) {
    dir.remove();
    throw error;
  }
  return {
    cluster,
    endpoint: cluster.endpoints[0]!,
    hosts: etcdHosts(cluster.endpoints),
    stop: async () => {
      await cluster.stop();
      dir.remove();
    },
  };
}
