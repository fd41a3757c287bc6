// `fencer conformance` against the deliberately broken variants: each fails
// the rule it breaks, and only that rule (an implementation that keeps no
// request records breaks R1 and with it R2; one whose refusals carry no
// reason fails every check that reads a sink's reason), where the real
// services hold them all (packages/conformance/test runs the kit, every rule
// of it, against a secured sink and coordinator). Every deployment here runs
// with credentials too, as A5 is only observable with two authenticated
// workers. The variants that break what must survive a crash (F6, L7, R3)
// are run with restart commands that SIGKILL the deployment's processes and
// start them again on their addresses.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RULES } from '@fencer/conformance';
import { ensureCredentials } from '@fencer/supervisor';
import { runFencer, serveRestartCommands, startFencer, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';
import { VARIANTS, variantBin, type VariantName } from '@fencer/variants';

const dir = tempDir('fencer-conformance-variants-');
const credentials = ensureCredentials(dir.path);
const children = new Set<FencerProcess>();
afterAll(async () => {
  await Promise.all([...children].map((child) => stopFencer(child, 1_000)));
  dir.remove();
});

/** A service on a port of its own; crash() SIGKILLs it and starts the same command line on that address. */
async function service(args: readonly string[], options: { bin?: string }) {
  let child = await startFencer([...args, '--listen', '127.0.0.1:0'], options);
  children.add(child);
  const { address } = child;
  return {
    address,
    async crash() {
      child.kill('SIGKILL');
      await child.exited;
      children.delete(child);
      child = await startFencer([...args, '--listen', address], options);
      children.add(child);
    },
  };
}

async function deployment(variant: VariantName) {
  // The variant in its service's place, the real one in the other's.
  const binOf = (name: 'sink' | 'coordinator') =>
    VARIANTS[variant].service === name ? { bin: variantBin(variant) } : {};
  const common = ['--credentials', credentials.credentialsFile];
  const sink = await service(['sink', ...common, '--data', join(dir.path, `${variant}-sink`)], binOf('sink'));
  const coordinator = await service(
    [
      'coordinator',
      ...common,
      '--sink-token-file',
      credentials.sinkTokenFile,
      '--data',
      join(dir.path, `${variant}-coordinator`),
      '--sink',
      sink.address,
    ],
    binOf('coordinator'),
  );
  return { sink, coordinator };
}

/**
 * A variant, the rule it breaks, every rule the kit must fail on it, rules
 * left out of the run, and whether the kit is given restart commands.
 */
interface Case {
  readonly variant: VariantName;
  readonly breaks: string;
  readonly fails: readonly string[];
  readonly without?: readonly string[];
  readonly restarts?: boolean;
}

const CASES: readonly Case[] = [
  // WriteStream is the same commit path as Write, so it breaks F1 and F3 too.
  { variant: 'lenient-sink', breaks: 'F1', fails: ['F1', 'WriteStream'] },
  { variant: 'overwriting-sink', breaks: 'F3', fails: ['F3', 'WriteStream'] },
  { variant: 'no-request-records-coordinator', breaks: 'R1', fails: ['R1', 'R2', 'LeaseStream'] },
  { variant: 'ownerless-sink', breaks: 'A5', fails: ['A5'] },
  // L4's LEASE_EXPIRED half: the holder's Renew after expiry.
  { variant: 'reviving-coordinator', breaks: 'L4', fails: ['L4'] },
  { variant: 'wrapping-coordinator', breaks: 'T1', fails: ['T1'] },
  {
    variant: 'bare-errors-sink',
    breaks: 'errors',
    // F1, F3, F4, A5, V2, V3 and ForceRelease fail with it: their checks
    // expect the sink's reasons (STALE_TOKEN, RESULT_CONFLICT,
    // FENCE_REGRESSION, OWNER_MISMATCH, the sink's INVALID_FIELD and
    // MALFORMED_MESSAGE; the released holder's STALE_TOKEN), which only
    // ErrorInfo or the trailer carries. T1 is left out: the real coordinator cannot read
    // this sink's FENCE_REGRESSION either, so its Acquire ends SINK_UNAVAILABLE,
    // an UNAVAILABLE that the kit takes for no answer and ends the run on (exit 2).
    fails: ['F1', 'F3', 'F4', 'A5', 'V2', 'V3', 'errors', 'ForceRelease'],
    without: ['T1'],
  },
  { variant: 'lenient-decoding-sink', breaks: 'V3', fails: ['V3'] },
  { variant: 'forgetful-sink', breaks: 'F6', fails: ['F6'], restarts: true },
  { variant: 'request-forgetting-coordinator', breaks: 'R3', fails: ['R3'], restarts: true },
  { variant: 'grant-forgetting-coordinator', breaks: 'L7', fails: ['L7'], restarts: true },
];

describe('fencer conformance against broken variants', () => {
  for (const { variant, breaks, fails, without = [], restarts = false } of CASES) {
    const checked = RULES.filter((rule) => !without.includes(rule));
    const failing = fails.filter((rule) => checked.includes(rule)).sort();
    it(`${variant} fails ${breaks}, and exactly ${failing.join(', ')}`, async () => {
      const { sink, coordinator } = await deployment(variant);
      const commands = restarts
        ? await serveRestartCommands({ sink: sink.crash, coordinator: coordinator.crash })
        : null;
      const run = await runFencer([
        'conformance',
        '--credentials',
        credentials.credentialsFile,
        '--coordinator',
        coordinator.address,
        '--sink',
        sink.address,
        '--json',
        ...(without.length === 0 ? [] : ['--only', checked.join(',')]),
        ...(commands
          ? [
              '--sink-restart-cmd',
              commands.command('sink'),
              '--coordinator-restart-cmd',
              commands.command('coordinator'),
            ]
          : []),
      ]).finally(() => commands?.close());
      expect(run.code, run.stderr).toBe(1);
      const rows = JSON.parse(run.stdout) as { rule: string; status: string; detail: string }[];
      expect(rows.map((row) => row.rule)).toEqual(checked);
      const failed = rows.filter((row) => row.status === 'failed');
      expect(failed.map((row) => row.rule).sort()).toEqual(failing);
      for (const row of failed) expect(row.detail, row.rule).not.toBe('');
    });
  }
});
