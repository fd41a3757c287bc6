import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestCa } from '@fencer/testkit';
import {
  buildCoordinatorCommand,
  ConfigError,
  coordinatorConfig,
  readSinkToken,
  type CoordinatorConfig,
} from './config.js';

const dir = mkdtempSync(join(tmpdir(), 'fencer-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

async function parse(args: string[], env: Record<string, string> = {}): Promise<CoordinatorConfig> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    let config: CoordinatorConfig | undefined;
    const command = buildCoordinatorCommand(async (c) => {
      config = c;
    }).exitOverride();
    command.configureOutput({ writeErr: () => {}, writeOut: () => {} });
    await command.parseAsync(args, { from: 'user' });
    return config!;
  } finally {
    for (const key of Object.keys(env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

describe('coordinator configuration', () => {
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (key.startsWith('FENCER_COORDINATOR_')) delete process.env[key];
  });

  it('has the documented defaults and is frozen', async () => {
    const config = await parse(['--insecure']);
    expect(config).toEqual({
      listen: '127.0.0.1:50052',
      store: 'level',
      etcd: null,
      dataDir: './data/coordinator',
      repair: false,
      sinks: [{ name: 'default', address: '127.0.0.1:50051' }],
      sinkToken: null,
      sinkTls: undefined,
      auth: { kind: 'insecure' },
      tls: null,
      fenceOnExpiry: false,
      requestRetentionMs: 3_600_000,
      sinkDeadlineMs: 2_000,
      metrics: undefined,
      coreLimits: {
        maxRequestRecords: 100_000,
        maxRecordsPerOwner: 10_000,
        maxAcquiresPerSecond: 100,
        maxIdleResources: 10_000,
      },
      connectionLimits: {
        maxConnections: 4_096,
        maxConnectionsPerHost: 1_024,
        maxConcurrentStreams: 1_000,
        maxMetadataBytes: 8_192,
        maxSessionMemoryMib: 64,
        maxConnectionIdleMs: 300_000,
        keepaliveMs: 30_000,
        keepaliveTimeoutMs: 10_000,
        maxConnectionAgeMs: 3_600_000,
        maxConnectionAgeGraceMs: 60_000,
      },
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every option from its environment variable', async () => {
    const token = file('env-token', 'env-sink-token-0123456789\n');
    const ca = createTestCa(dir);
    const server = ca.issueServer();
    const client = ca.issueClient('coordinator');
    const config = await parse([], {
      FENCER_COORDINATOR_TLS_CERT: server.cert,
      FENCER_COORDINATOR_TLS_KEY: server.key,
      FENCER_COORDINATOR_TLS_CA: ca.cert,
      FENCER_COORDINATOR_SINK_TLS_CA: ca.cert,
      FENCER_COORDINATOR_SINK_TLS_CERT: client.cert,
      FENCER_COORDINATOR_SINK_TLS_KEY: client.key,
      FENCER_COORDINATOR_LISTEN: '127.0.0.1:7001',
      FENCER_COORDINATOR_DATA: '/tmp/x',
      FENCER_COORDINATOR_REPAIR: '1',
      FENCER_COORDINATOR_SINK: '127.0.0.1:7002',
      FENCER_COORDINATOR_SINK_TOKEN_FILE: token,
      FENCER_COORDINATOR_INSECURE: '1',
      FENCER_COORDINATOR_FENCE_ON_EXPIRY: '1',
      FENCER_COORDINATOR_REQUEST_RETENTION_MS: '5000',
      FENCER_COORDINATOR_SINK_DEADLINE_MS: '250',
      FENCER_COORDINATOR_METRICS: '127.0.0.1:0',
      FENCER_COORDINATOR_MAX_REQUEST_RECORDS: '50',
      FENCER_COORDINATOR_MAX_RECORDS_PER_OWNER: '5',
      FENCER_COORDINATOR_MAX_ACQUIRES_PER_SECOND: '2',
      FENCER_COORDINATOR_MAX_IDLE_RESOURCES: '0',
      FENCER_COORDINATOR_MAX_CONCURRENT_STREAMS: '7',
      FENCER_COORDINATOR_STORE: 'etcd',
      FENCER_COORDINATOR_ETCD: '127.0.0.1:2379,127.0.0.1:2380',
      FENCER_COORDINATOR_ETCD_PREFIX: '/team-a/',
      FENCER_COORDINATOR_LEADER_TTL_MS: '3000',
      FENCER_COORDINATOR_ADVERTISE: 'coordinator-1.example:50052',
    });
    expect(config).toMatchObject({
      listen: '127.0.0.1:7001',
      dataDir: '/tmp/x',
      repair: true,
      sinks: [{ name: 'default', address: '127.0.0.1:7002' }],
      sinkToken: 'env-sink-token-0123456789',
      auth: { kind: 'insecure' },
      fenceOnExpiry: true,
      requestRetentionMs: 5_000,
      sinkDeadlineMs: 250,
      metrics: '127.0.0.1:0',
      coreLimits: { maxRequestRecords: 50, maxRecordsPerOwner: 5, maxAcquiresPerSecond: 2, maxIdleResources: 0 },
      connectionLimits: { maxConcurrentStreams: 7 },
      store: 'etcd',
      etcd: {
        endpoints: ['127.0.0.1:2379', '127.0.0.1:2380'],
        prefix: '/team-a/',
        leaderTtlMs: 3_000,
        advertise: 'coordinator-1.example:50052',
      },
    });
    expect(config.tls?.clientCa).toBeInstanceOf(Buffer);
    expect(Object.keys(config.sinkTls ?? {}).sort()).toEqual(['ca', 'cert', 'key']);
  });

  it('flags win over the environment', async () => {
    const config = await parse(['--insecure', '--sink-deadline-ms', '10'], {
      FENCER_COORDINATOR_SINK_DEADLINE_MS: '250',
    });
    expect(config.sinkDeadlineMs).toBe(10);
  });

  it('loads a credentials file', async () => {
    const path = file(
      'creds.json',
      JSON.stringify([{ token: 'worker-token-0123456789', identity: 'alice', role: 'worker' }]),
    );
    const config = await parse(['--credentials', path]);
    expect(config.auth).toEqual({
      kind: 'credentials',
      path,
      credentials: [{ token: 'worker-token-0123456789', identity: 'alice', role: 'worker' }],
      rule: {},
    });
  });

  it('H1: --store etcd takes the etcd defaults; the advertised address defaults to the listening one', async () => {
    const config = await parse(['--insecure', '--store', 'etcd', '--etcd', '127.0.0.1:2379']);
    expect(config.store).toBe('etcd');
    expect(config.etcd).toEqual({
      endpoints: ['127.0.0.1:2379'],
      prefix: '/fencer/v1/',
      leaderTtlMs: 5_000,
      advertise: undefined,
      waitMs: 10_000,
    });
    expect(Object.isFrozen(config.etcd)).toBe(true);
  });

  it.each([
    [['--store', 'etcd'], /^--store etcd needs --etcd HOST:PORT/],
    [['--store', 'etcd', '--etcd', '127.0.0.1:2379', '--etcd-prefix', '/fencer'], /^--etcd-prefix must end with '\/'/],
    [
      ['--store', 'etcd', '--etcd', '127.0.0.1:2379', '--leader-ttl-ms', '999'],
      /^--leader-ttl-ms must be at least 1000/,
    ],
    [['--etcd', '127.0.0.1:2379'], /^--etcd is only read with --store etcd$/],
    [['--advertise', '127.0.0.1:1'], /^--advertise is only read with --store etcd$/],
    [['--etcd-wait-ms', '1000'], /^--etcd-wait-ms is only read with --store etcd$/],
  ])('refuses %j with a one-line config error naming the flag', async (args, message) => {
    const error = await parse(['--insecure', ...args]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'fencer.config' });
    expect((error as Error).message.replace(/^error: /, '')).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('P1: --sink NAME=HOST:PORT repeated names each sink, in order; a bare address is the sink named default', async () => {
    const config = await parse(['--insecure', '--sink', 'a=127.0.0.1:7001', '--sink', 'b.2=[::1]:7002']);
    expect(config.sinks).toEqual([
      { name: 'a', address: '127.0.0.1:7001' },
      { name: 'b.2', address: '[::1]:7002' },
    ]);
    expect((await parse(['--insecure', '--sink', '127.0.0.1:7003'])).sinks).toEqual([
      { name: 'default', address: '127.0.0.1:7003' },
    ]);
    // From the environment: one sink.
    expect((await parse(['--insecure'], { FENCER_COORDINATOR_SINK: 'x=127.0.0.1:7004' })).sinks).toEqual([
      { name: 'x', address: '127.0.0.1:7004' },
    ]);
  });

  it.each([
    [['a=127.0.0.1:1', 'a=127.0.0.1:2'], 'the name a is given twice'],
    [['a=127.0.0.1:1', 'b=127.0.0.1:1'], 'the address 127.0.0.1:1 is given twice'],
    [['127.0.0.1:1', 'default=127.0.0.1:2'], 'the name default is given twice'],
  ])('P1: refuses --sink %j with one line: %s', async (sinks, message) => {
    const error = await parse(['--insecure', ...sinks.flatMap((sink) => ['--sink', sink])]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'fencer.config' });
    expect((error as Error).message).toMatch(new RegExp(`--sink: ${message}$`));
  });

  it.each([
    ['=127.0.0.1:1', /"=127\.0\.0\.1:1": the name before '=' is empty/],
    ['a b=127.0.0.1:1', /a sink name is made of A-Z, a-z, 0-9, '_', '\.' and '-' only/],
    ['é=127.0.0.1:1', /a sink name is made of/],
    ['a=nowhere', /"a=nowhere": /],
  ])('P1: refuses --sink %s as a CLI error naming it', async (sink, message) => {
    const error = await parse(['--insecure', '--sink', sink]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'commander.invalidArgument' });
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it.each([
    ['neither --credentials nor --insecure', {}],
    ['both --credentials and --insecure', { credentials: '/x', insecure: true }],
    ['an unreadable credentials file', { credentials: join(dir, 'missing.json') }],
    ['a credentials file that is not JSON', { credentials: file('bad.json', '{nope') }],
    ['an unreadable sink token file', { insecure: true, sinkTokenFile: join(dir, 'missing-token') }],
    ['an empty sink token file', { insecure: true, sinkTokenFile: file('empty-token', ' \n\t ') }],
    ['a sink token file with two tokens', { insecure: true, sinkTokenFile: file('two-tokens', 'a b') }],
    ['a sink deadline past the timer range', { insecure: true, sinkDeadlineMs: 2 ** 31 }],
  ])('refuses %s with a one-line ConfigError', (_name, options) => {
    const base = {
      listen: '127.0.0.1:0',
      data: dir,
      sink: '127.0.0.1:1',
      requestRetentionMs: 1,
      sinkDeadlineMs: 1,
    };
    let error: unknown;
    try {
      coordinatorConfig({ ...base, ...options });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toContain('\n');
  });

  it('trims whitespace around the sink token', () => {
    expect(readSinkToken(file('spaced', '\n\t  tok-0123456789abcdef \r\n'))).toBe('tok-0123456789abcdef');
  });

  it.each([
    ['--request-retention-ms', '0'],
    ['--max-idle-resources', '-1'],
    ['--sink-deadline-ms', 'soon'],
    ['--listen', 'nowhere'],
    ['--sink', 'host:99999'],
    ['--metrics', ':80'],
    ['--store', 'rocksdb'],
    ['--etcd', '127.0.0.1:2379,,127.0.0.1:2380'],
    ['--leader-ttl-ms', '0'],
    ['--advertise', 'nowhere'],
  ])('rejects %s %s as a CLI error', async (flag, value) => {
    await expect(parse(['--insecure', flag, value])).rejects.toMatchObject({ code: 'commander.invalidArgument' });
  });
});
