// Secured fencer processes for tests: a credentials file with the identities,
// tokens and roles a test names, a token file per identity, and `fencer sink`
// and `fencer coordinator` children that require them (A1), over TLS or
// mutual TLS when given certificates.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CertFiles } from './certificates.js';
import { startFencer, type FencerProcess } from './processes.js';

/** A credential's role, as a credentials file spells it. */
export type TestRole = 'coordinator' | 'worker' | 'admin';

/** A credentials file written by writeTestCredentials, and what it holds. */
export interface TestCredentials<Identity extends string = string> {
  /** The credentials file, what `--credentials` takes. */
  readonly file: string;
  /** Each identity's bearer token. */
  readonly tokens: Readonly<Record<Identity, string>>;
  /** A file holding `identity`'s token alone, what `--token-file` and `--sink-token-file` take. */
  tokenFile(identity: Identity): string;
}

/**
 * Writes `tokens` (identity → bearer token) as `dir/credentials.json`, and
 * each token to `dir/<identity>.token`. An identity's role is its entry in
 * `roles`, else its own name for `coordinator` and `admin`, else worker.
 * Both files are mode 0600, as `fencer credentials` writes them.
 */
export function writeTestCredentials<Identity extends string>(
  dir: string,
  tokens: Readonly<Record<Identity, string>>,
  roles?: Readonly<Partial<Record<Identity, TestRole>>>,
): TestCredentials<Identity> {
  const identities = Object.keys(tokens) as Identity[];
  const roleOf = (identity: Identity): TestRole =>
    roles?.[identity] ?? (identity === 'coordinator' ? 'coordinator' : identity === 'admin' ? 'admin' : 'worker');
  const file = join(dir, 'credentials.json');
  const credentials = identities.map((identity) => ({ token: tokens[identity], identity, role: roleOf(identity) }));
  writeFileSync(file, JSON.stringify(credentials), { mode: 0o600 });
  const tokenFile = (identity: Identity) => join(dir, `${identity}.token`);
  for (const identity of identities) writeFileSync(tokenFile(identity), tokens[identity], { mode: 0o600 });
  return { file, tokens, tokenFile };
}

/** How a secured process serves: over TLS, or mutual TLS, and with which further flags. */
export interface SecuredServing {
  /**
   * Serve TLS with this server certificate (`--tls-cert`, `--tls-key`); with
   * `clientCa`, mutual TLS: a client needs a certificate that CA signed (`--tls-ca`).
   */
  readonly tls?: CertFiles & { readonly clientCa?: string };
  /** Further flags, after the ones this helper gives. */
  readonly args?: readonly string[];
}

function servingArgs(command: string, credentials: { readonly file: string }, data: string, serving: SecuredServing) {
  const { tls, args = [] } = serving;
  return [
    command,
    ...['--listen', '127.0.0.1:0', '--credentials', credentials.file, '--data', data],
    ...(tls ? ['--tls-cert', tls.cert, '--tls-key', tls.key] : []),
    ...(tls?.clientCa ? ['--tls-ca', tls.clientCa] : []),
    ...args,
  ];
}

/** Starts `fencer sink` on 127.0.0.1:0 over `data`, requiring `credentials`; rejects as startFencer does. */
export function startSecuredSink(
  credentials: { readonly file: string },
  data: string,
  serving: SecuredServing = {},
): Promise<FencerProcess> {
  return startFencer(servingArgs('sink', credentials, data, serving));
}

/** How a coordinator reaches its sink over TLS: trusting `ca`, and presenting `client` in place of a token. */
export interface SinkTls {
  readonly ca: string;
  readonly client?: CertFiles;
}

/**
 * Starts `fencer coordinator` on 127.0.0.1:0 over `data`, requiring
 * `credentials` and granting through the sink at `sink`. It calls the sink
 * with the `coordinator` identity's token (`--sink-token-file`), over TLS
 * trusting `sinkTls.ca` when given; with `sinkTls.client` it presents that
 * certificate instead of the token (A2). Rejects as startFencer does.
 */
export function startSecuredCoordinator(
  credentials: TestCredentials<'coordinator'>,
  data: string,
  sink: string,
  serving: SecuredServing & { readonly sinkTls?: SinkTls } = {},
): Promise<FencerProcess> {
  const { sinkTls, ...own } = serving;
  const toSink = sinkTls?.client
    ? ['--sink-tls-cert', sinkTls.client.cert, '--sink-tls-key', sinkTls.client.key]
    : ['--sink-token-file', credentials.tokenFile('coordinator')];
  const args = [...(sinkTls ? ['--sink-tls-ca', sinkTls.ca] : []), ...toSink, ...(own.args ?? [])];
  return startFencer(servingArgs('coordinator', credentials, data, { ...own, args: ['--sink', sink, ...args] }));
}
