// Flag and environment parsing of `fencer sink` without spawning processes:
// every bad value is refused before anything starts (A1, V2 limits).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CommanderError } from 'commander';
import { tempDir } from '@fencer/testkit';
import { buildSinkCommand, ConfigError, sinkConfig, type SinkConfig } from './config.js';

const dir = tempDir('fencer-sink-config-');
afterAll(() => dir.remove());
afterEach(() => {
  delete process.env.FENCER_SINK_INSECURE;
  delete process.env.FENCER_SINK_LISTEN;
});

function credentialsFile(name: string, content: unknown): string {
  const path = join(dir.path, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** Parses `args` as `fencer sink` would; resolves with the config or rejects with commander's error. */
async function parse(args: string[]): Promise<SinkConfig> {
  let config: SinkConfig | undefined;
  const command = buildSinkCommand(async (c) => {
    config = c;
  })
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  await command.parseAsync(args, { from: 'user' });
  return config!;
}

describe('sink configuration', () => {
  const base = { listen: '127.0.0.1:0', data: dir.path, maxPayloadBytes: 1024 };

  it('--insecure gives a frozen config with auth off', () => {
    const config = sinkConfig({ ...base, insecure: true });
    expect(config.auth).toEqual({ kind: 'insecure' });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('A1: a credentials file with a coordinator entry is accepted and frozen', () => {
    const path = credentialsFile('ok.json', [
      { token: 'coordinator-token-0001', identity: 'c', role: 'coordinator' },
      { token: 'worker-token-000000001', identity: 'w', role: 'worker' },
    ]);
    const config = sinkConfig({ ...base, credentials: path });
    expect(config.auth.kind).toBe('credentials');
    expect(config.auth.kind === 'credentials' && config.auth.credentials.map((c) => c.role)).toEqual([
      'coordinator',
      'worker',
    ]);
    expect(Object.isFrozen(config.auth)).toBe(true);
  });

  it.each([
    ['neither --credentials nor --insecure (A1)', {}],
    ['both --credentials and --insecure', { insecure: true, credentials: 'x' }],
    ['no coordinator credential (A1)', { credentials: 'no-coordinator' }],
    ['a malformed credentials file', { credentials: 'malformed' }],
    ['a missing credentials file', { credentials: 'missing' }],
    ['a payload limit beyond the cap', { insecure: true, maxPayloadBytes: 512 * 1024 * 1024 }],
  ])('refuses %s', (_, options: Record<string, unknown>) => {
    const files: Record<string, string> = {
      x: credentialsFile('x.json', [{ token: 'coordinator-token-0001', identity: 'c', role: 'coordinator' }]),
      'no-coordinator': credentialsFile('w.json', [{ token: 'worker-token-000000001', identity: 'w', role: 'worker' }]),
      malformed: credentialsFile('bad.json', '{not json'),
      missing: join(dir.path, 'absent.json'),
    };
    const credentials = typeof options.credentials === 'string' ? files[options.credentials] : undefined;
    expect(() => sinkConfig({ ...base, ...options, ...(credentials === undefined ? {} : { credentials }) })).toThrow(
      ConfigError,
    );
  });
});

describe('sink flags', () => {
  it('defaults: 127.0.0.1:50051, ./data/sink, 1 MiB payloads, no metrics', async () => {
    const config = await parse(['--insecure']);
    expect(config).toEqual({
      listen: '127.0.0.1:50051',
      dataDir: './data/sink',
      repair: false,
      auth: { kind: 'insecure' },
      tls: null,
      maxPayloadBytes: 1024 * 1024,
      metrics: undefined,
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
  });

  it('V4: reads each connection limit from its flag or FENCER_SINK_* variable', async () => {
    process.env.FENCER_SINK_MAX_CONNECTION_IDLE_MS = '2000';
    process.env.FENCER_SINK_MAX_SESSION_MEMORY_MIB = '4';
    let config: SinkConfig;
    try {
      config = await parse(['--insecure', '--max-concurrent-streams', '8', '--keepalive-timeout-ms', '500']);
    } finally {
      delete process.env.FENCER_SINK_MAX_CONNECTION_IDLE_MS;
      delete process.env.FENCER_SINK_MAX_SESSION_MEMORY_MIB;
    }
    expect(config.connectionLimits).toMatchObject({
      maxConcurrentStreams: 8,
      keepaliveTimeoutMs: 500,
      maxConnectionIdleMs: 2_000,
      maxSessionMemoryMib: 4,
    });
  });

  it.each([
    ['--listen', 'nope'],
    ['--listen', '127.0.0.1:70000'],
    ['--max-payload-bytes', '0'],
    ['--max-payload-bytes', 'lots'],
    ['--max-payload-bytes', '1.5'],
    ['--max-concurrent-streams', '0'],
    ['--max-connection-idle-ms', String(2 ** 31)],
    ['--metrics', 'localhost'],
  ])('refuses %s %s', async (flag, value) => {
    await expect(parse(['--insecure', flag, value])).rejects.toBeInstanceOf(CommanderError);
  });

  it('refuses an unknown flag', async () => {
    await expect(parse(['--insecure', '--tls-cert', 'x'])).rejects.toBeInstanceOf(CommanderError);
  });

  it.each(['1', 'true', 'YES'])('FENCER_SINK_INSECURE=%j turns auth off explicitly', async (value) => {
    process.env.FENCER_SINK_INSECURE = value;
    expect((await parse([])).auth).toEqual({ kind: 'insecure' });
  });

  it.each(['0', 'false', 'no', ''])('A1: FENCER_SINK_INSECURE=%j does not turn auth off', async (value) => {
    process.env.FENCER_SINK_INSECURE = value;
    await expect(parse([])).rejects.toBeInstanceOf(CommanderError);
  });

  it('an unclear FENCER_SINK_INSECURE is refused', async () => {
    process.env.FENCER_SINK_INSECURE = 'maybe';
    await expect(parse([])).rejects.toBeInstanceOf(CommanderError);
  });

  it('flags win over the environment', async () => {
    process.env.FENCER_SINK_LISTEN = '127.0.0.1:1111';
    expect((await parse(['--insecure', '--listen', '127.0.0.1:2222'])).listen).toBe('127.0.0.1:2222');
    expect((await parse(['--insecure'])).listen).toBe('127.0.0.1:1111');
  });
});
