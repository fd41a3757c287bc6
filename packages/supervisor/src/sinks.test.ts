// The names, addresses and --sink flags of a cluster's sinks sharded by
// resource (P1): one sink keeps the names it always had.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@fencer/cli-kit';
import { sinkFlagValues, sinkListen, sinkName, sinkProxyNames } from './sinks.js';

describe('a cluster’s sinks', () => {
  it('are "sink" alone, else sink-1, sink-2...', () => {
    expect(sinkName(1, 1)).toBe('sink');
    expect([1, 2, 3].map((index) => sinkName(index, 3))).toEqual(['sink-1', 'sink-2', 'sink-3']);
  });

  it('name their proxies as one sink always did, or after each sink and coordinator', () => {
    expect(sinkProxyNames(1, 1)).toEqual({
      workersToSink: 'workers_to_sink',
      coordinatorToSink: 'coordinator_to_sink',
    });
    expect(sinkProxyNames(2, 2, 'soak7_')).toEqual({
      workersToSink: 'soak7_workers_to_sink_2',
      coordinatorToSink: 'soak7_coordinator_to_sink_2',
    });
    expect(sinkProxyNames(2, 2, '', 1).coordinatorToSink).toBe('coordinator_1_to_sink_2');
  });

  it('listen from the given address up, ten ports apart, clear of the coordinator’s ports above the first', () => {
    expect(sinkListen('127.0.0.1:50051', 1, 1)).toBe('127.0.0.1:50051');
    expect(sinkListen('127.0.0.1:50051', 1, 2)).toBe('127.0.0.1:50051');
    expect(sinkListen('127.0.0.1:50051', 3, 3)).toBe('127.0.0.1:50071');
    expect(sinkListen('127.0.0.1:0', 2, 2)).toBe('127.0.0.1:0');
    expect(() => sinkListen('127.0.0.1:65530', 2, 2)).toThrow(ConfigError);
    expect(() => sinkListen('127.0.0.1:65530', 2, 2)).toThrow(/sink 2 would listen on port 65540/);
  });

  it('P1: give a coordinator the one sink bare (named default), several by name', () => {
    expect(sinkFlagValues([{ name: 'sink', address: '127.0.0.1:7000' }])).toEqual(['127.0.0.1:7000']);
    expect(
      sinkFlagValues([
        { name: 'sink-1', address: '127.0.0.1:7000' },
        { name: 'sink-2', address: '127.0.0.1:7001' },
      ]),
    ).toEqual(['sink-1=127.0.0.1:7000', 'sink-2=127.0.0.1:7001']);
  });
});
