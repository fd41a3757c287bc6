// The credentials a cluster (or a compose deployment) runs with: generated
// once into a directory, reused afterwards so clients' tokens stay valid.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { ConfigError, configuredCommand } from '@fencer/cli-kit';
import { readCredentialsFile } from '@fencer/server-kit';

/** The worker identities generated unless more are asked for; workers act as their identity (A3). */
export const DEFAULT_WORKERS: readonly string[] = Object.freeze(['worker-a', 'worker-b']);

/** Files a secured cluster's clients and coordinator authenticate with. */
export interface ClusterCredentials {
  /** JSON array of {token, identity, role} (mode 0600). */
  readonly credentialsFile: string;
  /** The coordinator's bearer token for the sink. */
  readonly sinkTokenFile: string;
  /** Each generated worker identity's bearer token file (DATA/<identity>.token), for `fencer worker --token-file`. */
  readonly workerTokenFiles: Readonly<Record<string, string>>;
}

/**
 * Creates DATA/credentials.json (mode 0600) for a coordinator, an admin and
 * `workers`, DATA/coordinator.token and a DATA/<identity>.token per worker,
 * once; later runs reuse them so clients' tokens stay valid across
 * restarts. Throws ConfigError if an existing file lacks one of `workers`.
 */
export function ensureCredentials(data: string, workers: readonly string[] = DEFAULT_WORKERS): ClusterCredentials {
  const credentialsFile = join(data, 'credentials.json');
  const sinkTokenFile = join(data, 'coordinator.token');
  if (!existsSync(credentialsFile)) {
    const identities = [
      { identity: 'coordinator', role: 'coordinator' },
      { identity: 'admin', role: 'admin' },
      ...workers.map((identity) => ({ identity, role: 'worker' })),
    ];
    const credentials = identities.map(({ identity, role }) => ({
      token: randomBytes(24).toString('base64url'),
      identity,
      role,
    }));
    writeFileSync(credentialsFile, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  }
  if (!existsSync(sinkTokenFile)) {
    // Derived from the credentials file, so an edited file keeps working.
    const credentials = readCredentials(credentialsFile);
    const coordinator = credentials.find((c) => c.role === 'coordinator');
    if (!coordinator) throw new ConfigError(`${credentialsFile} has no coordinator credential for the sink`);
    writeFileSync(sinkTokenFile, coordinator.token + '\n', { mode: 0o600 });
  }
  const workerTokenFiles: Record<string, string> = {};
  const known = readCredentials(credentialsFile).filter((c) => c.role === 'worker');
  const missing = workers.filter((worker) => !known.some((c) => c.identity === worker));
  if (missing.length > 0)
    throw new ConfigError(`${credentialsFile} has no worker credential for ${missing.join(', ')}`);
  for (const { identity, token } of known) {
    const file = join(data, `${identity}.token`);
    if (!existsSync(file)) writeFileSync(file, token + '\n', { mode: 0o600 });
    workerTokenFiles[identity] = file;
  }
  return { credentialsFile, sinkTokenFile, workerTokenFiles };
}

/**
 * The bearer token of the first credential in `credentialsFile` with this
 * identity or role: how a cluster's own tools (the demo, the chaos suite,
 * tests) act as `admin` or as a worker. Throws ConfigError when none matches.
 */
export function credentialToken(credentialsFile: string, who: { identity: string } | { role: string }): string {
  const match = readCredentials(credentialsFile).find((c) =>
    'identity' in who ? c.identity === who.identity : c.role === who.role,
  );
  if (!match) throw new ConfigError(`${credentialsFile} has no credential for ${JSON.stringify(who)}`);
  return match.token;
}

function readCredentials(file: string) {
  try {
    return readCredentialsFile(file);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/** `fencer credentials DIR`: writes (or keeps) DIR/credentials.json, DIR/coordinator.token and the workers' DIR/<identity>.token, then prints their paths. */
export function credentialsCommand(): Command {
  return configuredCommand(
    new Command('credentials')
      .description(
        'generate credentials.json, coordinator.token and worker tokens into DIR (kept if present), e.g. for docker compose',
      )
      .argument('<dir>', 'where to write them'),
    [],
    () => undefined,
    async (_config, dir: string) => {
      const target = resolve(dir);
      try {
        mkdirSync(target, { recursive: true });
      } catch (error) {
        throw new ConfigError(
          `cannot use ${target}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
      const { credentialsFile, sinkTokenFile, workerTokenFiles } = ensureCredentials(target);
      process.stdout.write([credentialsFile, sinkTokenFile, ...Object.values(workerTokenFiles)].join('\n') + '\n');
    },
  );
}
