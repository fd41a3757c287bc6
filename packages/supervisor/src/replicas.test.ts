// The names, addresses and flags of coordinator replicas on etcd (H): what
// the chaos suite's nemeses address, and what each replica is started with.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@fencer/cli-kit';
import { replicaListen, replicaName, replicaProxyNames, replicaStoreArgs } from './replicas.js';

describe('coordinator replicas', () => {
  it('are named coordinator-1, coordinator-2...', () => {
    expect([1, 2, 3].map(replicaName)).toEqual(['coordinator-1', 'coordinator-2', 'coordinator-3']);
  });

  it("name each link's proxy after the replica, one proxy per etcd endpoint", () => {
    expect(replicaProxyNames(2, 3)).toEqual({
      workersToCoordinator: 'workers_to_coordinator_2',
      coordinatorToSink: ['coordinator_2_to_sink'],
      coordinatorToEtcd: ['coordinator_2_to_etcd_1', 'coordinator_2_to_etcd_2', 'coordinator_2_to_etcd_3'],
    });
    expect(replicaProxyNames(1, 1, 'run-7-')).toEqual({
      workersToCoordinator: 'run-7-workers_to_coordinator_1',
      coordinatorToSink: ['run-7-coordinator_1_to_sink'],
      coordinatorToEtcd: ['run-7-coordinator_1_to_etcd_1'],
    });
  });

  it('P3: with several sinks, a proxy to each, named after the sink too', () => {
    expect(replicaProxyNames(2, 1, '', 2).coordinatorToSink).toEqual([
      'coordinator_2_to_sink_1',
      'coordinator_2_to_sink_2',
    ]);
  });

  it.each([
    ['127.0.0.1:50052', 1, '127.0.0.1:50052'],
    ['127.0.0.1:50052', 3, '127.0.0.1:50054'],
    ['127.0.0.1:0', 2, '127.0.0.1:0'],
    ['[::1]:7000', 2, '[::1]:7001'],
  ])('listen from %s up: replica %i on %s', (listen, index, expected) => {
    expect(replicaListen(listen, index)).toBe(expected);
  });

  it('refuses a replica past port 65535 with a one-line ConfigError', () => {
    expect(() => replicaListen('127.0.0.1:65535', 2)).toThrow(ConfigError);
    expect(() => replicaListen('127.0.0.1:65535', 2)).toThrow(/coordinator replica 2 would listen on port 65536/);
  });

  it('H1, H2, H6: start on the etcd store, dialling every endpoint, advertising the given address, waiting for etcd', () => {
    expect(replicaStoreArgs(['127.0.0.1:7001', '127.0.0.1:7002'], '127.0.0.1:6000')).toEqual([
      '--store',
      'etcd',
      '--etcd',
      '127.0.0.1:7001,127.0.0.1:7002',
      '--advertise',
      '127.0.0.1:6000',
      '--etcd-wait-ms',
      '60000',
    ]);
  });
});
