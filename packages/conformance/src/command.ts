// `fencer conformance`: the checks of checks.ts against a running
// deployment, printed as a table (or --json), written as JUnit XML with
// --junit. Exit 0 only if no rule failed; a bad flag is one line and exit 1.
import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  clientTls,
  ConfigError,
  configuredCommand,
  hostPortList,
  positiveInteger,
  tlsOptions,
  type TlsFlags,
} from '@fencer/cli-kit';
import { readCredentialsFile } from '@fencer/server-kit';
import { RULES, runChecks } from './checks.js';
import { json, junit, table } from './report.js';
import { Wire, type Callers, type Deployment } from './wire.js';

/** A validated run of the kit. */
export interface ConformanceConfig {
  readonly deployment: Deployment;
  readonly only: readonly string[] | undefined;
  readonly json: boolean;
  readonly junit: string | undefined;
}

/** `fencer conformance`. */
export function conformanceCommand(): Command {
  return configuredCommand(
    new Command('conformance')
      .description(
        'check a running deployment of fencing.v1 (any implementation) rule by rule, over the wire only; exit 0 only if no rule failed',
      )
      .addHelpText('after', `\nRules checked: ${RULES.join(', ')}. See docs/CONFORMANCE.md.`),
    [
      new Option('--coordinator <host:port,...>', 'the coordinator, or every replica (H2 and H7 need two)')
        .argParser(hostPortList)
        .makeOptionMandatory(),
      new Option('--sink <host:port,...>', 'the sink, or every sink of a sharded deployment (P4 needs two)')
        .argParser(hostPortList)
        .makeOptionMandatory(),
      new Option(
        '--credentials <file>',
        "the servers' credentials file ([{token, identity, role}]): the kit calls as two of its workers",
      ),
      new Option('--insecure', 'the services run --insecure: call without credentials, as owners of its own naming'),
      ...tlsOptions('client', 'FENCER_CONFORMANCE'),
      new Option('--only <rules>', `check only these rule ids, comma-separated (of ${RULES.join(', ')})`).argParser(
        (value) => {
          const rules = value.split(',').map((rule) => rule.trim());
          const unknown = rules.filter((rule) => !RULES.includes(rule));
          if (unknown.length > 0)
            throw new InvalidArgumentError(`no check of ${unknown.join(', ')}: the rules are ${RULES.join(', ')}`);
          return rules;
        },
      ),
      new Option(
        '--coordinator-restart-cmd <cmd>',
        'a shell command that SIGKILLs every coordinator and starts it again, returning once started (L7, R3)',
      ),
      new Option(
        '--sink-restart-cmd <cmd>',
        'a shell command that SIGKILLs every sink and starts it again, returning once started (F6)',
      ),
      new Option('--json', 'print [{"rule", "status", "detail"}] on stdout instead of the table'),
      new Option('--junit <file>', 'also write the results as JUnit XML, one testcase per rule'),
      new Option('--timeout-ms <n>', 'deadline of each call').default(5_000).argParser(positiveInteger),
    ],
    (
      flags: TlsFlags & {
        coordinator: readonly string[];
        sink: readonly string[];
        credentials?: string;
        insecure?: boolean;
        only?: readonly string[];
        json?: boolean;
        junit?: string;
        timeoutMs: number;
        coordinatorRestartCmd?: string;
        sinkRestartCmd?: string;
      },
    ): ConformanceConfig => ({
      deployment: {
        coordinators: flags.coordinator,
        sinks: flags.sink,
        tls: clientTls(flags),
        callers: callersOf(flags),
        timeoutMs: flags.timeoutMs,
        restart: {
          ...(flags.coordinatorRestartCmd === undefined ? {} : { coordinator: flags.coordinatorRestartCmd }),
          ...(flags.sinkRestartCmd === undefined ? {} : { sink: flags.sinkRestartCmd }),
        },
      },
      only: flags.only,
      json: flags.json === true,
      junit: flags.junit,
    }),
    runConformance,
  );
}

/** Two workers (and the admin and the coordinator when the file has them), or owners of the kit's own under --insecure. */
function callersOf(flags: { credentials?: string; insecure?: boolean }): Callers {
  if ((flags.credentials === undefined) === (flags.insecure !== true)) {
    throw new ConfigError("give either --credentials FILE (the servers' own) or --insecure");
  }
  if (flags.credentials === undefined) {
    return {
      workers: [
        { identity: 'conformance-a', token: undefined },
        { identity: 'conformance-b', token: undefined },
      ],
      // Insecure services take anyone as the admin (ForceRelease); F4 and T1 need a coordinator credential.
      admin: { identity: 'conformance-admin', token: undefined },
      coordinator: undefined,
    };
  }
  const credentials = readCredentialsFile(flags.credentials);
  const byRole = (role: string) =>
    credentials.filter((c) => c.role === role).map((c) => ({ identity: c.identity, token: c.token }));
  const workers = byRole('worker');
  if (workers.length < 2) {
    throw new ConfigError(
      `${flags.credentials} has ${workers.length} worker credential(s): the checks of L2, L4, L5 and F1 need two`,
    );
  }
  return { workers: [workers[0]!, workers[1]!], admin: byRole('admin')[0], coordinator: byRole('coordinator')[0] };
}

export async function runConformance(config: ConformanceConfig): Promise<void> {
  const wire = new Wire(config.deployment);
  try {
    const results = await runChecks(wire, config.only);
    process.stdout.write(`${config.json ? json(results) : table(results)}\n`);
    if (config.junit !== undefined) writeFileSync(config.junit, junit(results));
    if (results.some((result) => result.status === 'failed')) process.exitCode = 1;
  } catch (error) {
    process.stderr.write(`fencer conformance: ${(error as Error).message}\n`);
    process.exitCode = 2;
  } finally {
    wire.close();
  }
}
