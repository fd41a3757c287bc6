// `fencer conformance` against the deliberately broken variants: each fails
// the rule it breaks, and only that rule (an implementation that keeps no
// request records breaks R1 and with it R2; one whose refusals carry no
// reason fails every check that reads a sink's reason), where the real
// services hold them all (packages/conformance/test runs the kit, every rule
// of it, against a secured sink and coordinator). Every deployment here runs
// with credentials too, as A5 is only observable with two authenticated
// workers.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RULES } from '@fencer/conformance';
import { ensureCredentials } from '@fencer/supervisor';
import { runFencer, startFencer, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';
import { VARIANTS, variantBin, type VariantName } from '@fencer/variants';

const dir = tempDir('fencer-conformance-variants-');
const credentials = ensureCredentials(dir.path);
const children: FencerProcess[] = [];
afterAll(async () => {
  await Promise.all(children.map((child) => stopFencer(child, 1_000)));
  dir.remove();
});

async function deployment(variant: VariantName) {
  // The variant in its service's place, the real one in the other's.
  const binOf = (service: 'sink' | 'coordinator') =>
    VARIANTS[variant].service === service ? { bin: variantBin(variant) } : {};
  const sink = await startFencer(
    [
      'sink',
      '--credentials',
      credentials.credentialsFile,
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dir.path, `${variant}-sink`),
    ],
    binOf('sink'),
  );
  children.push(sink);
  const coordinator = await startFencer(
    [
      'coordinator',
      '--credentials',
      credentials.credentialsFile,
      '--sink-token-file',
      credentials.sinkTokenFile,
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dir.path, `${variant}-coordinator`),
      '--sink',
      sink.address,
    ],
    binOf('coordinator'),
  );
  children.push(coordinator);
  return { sink: sink.address, coordinator: coordinator.address };
}

/** A variant, the rule it breaks, every rule the kit must fail on it, and rules left out of the run. */
interface Case {
  readonly variant: VariantName;
  readonly breaks: string;
  readonly fails: readonly string[];
  readonly without?: readonly string[];
}

const CASES: readonly Case[] = [
  { variant: 'lenient-sink', breaks: 'F1', fails: ['F1'] },
  { variant: 'overwriting-sink', breaks: 'F3', fails: ['F3'] },
  { variant: 'no-request-records-coordinator', breaks: 'R1', fails: ['R1', 'R2'] },
  { variant: 'ownerless-sink', breaks: 'A5', fails: ['A5'] },
  // L4's LEASE_EXPIRED half: the holder's Renew after expiry.
  { variant: 'reviving-coordinator', breaks: 'L4', fails: ['L4'] },
  { variant: 'wrapping-coordinator', breaks: 'T1', fails: ['T1'] },
  {
    variant: 'bare-errors-sink',
    breaks: 'errors',
    // F1, F3, F4, A5 and V2 fail with it: their checks expect the sink's
    // reasons (STALE_TOKEN, RESULT_CONFLICT, FENCE_REGRESSION, OWNER_MISMATCH,
    // the sink's INVALID_FIELD), which only ErrorInfo or the trailer carries. T1 is left out: the real coordinator cannot read
    // this sink's FENCE_REGRESSION either, so its Acquire ends SINK_UNAVAILABLE,
    // an UNAVAILABLE that the kit takes for no answer and ends the run on (exit 2).
    fails: ['F1', 'F3', 'F4', 'A5', 'V2', 'errors'],
    without: ['T1'],
  },
];

describe('fencer conformance against broken variants', () => {
  for (const { variant, breaks, fails, without = [] } of CASES) {
    const checked = RULES.filter((rule) => !without.includes(rule));
    const failing = fails.filter((rule) => checked.includes(rule)).sort();
    it(`${variant} fails ${breaks}, and exactly ${failing.join(', ')}`, async () => {
      const { sink, coordinator } = await deployment(variant);
      const run = await runFencer([
        'conformance',
        '--credentials',
        credentials.credentialsFile,
        '--coordinator',
        coordinator,
        '--sink',
        sink,
        '--json',
        ...(without.length === 0 ? [] : ['--only', checked.join(',')]),
      ]);
      expect(run.code, run.stderr).toBe(1);
      const rows = JSON.parse(run.stdout) as { rule: string; status: string; detail: string }[];
      expect(rows.map((row) => row.rule)).toEqual(checked);
      const failed = rows.filter((row) => row.status === 'failed');
      expect(failed.map((row) => row.rule).sort()).toEqual(failing);
      for (const row of failed) expect(row.detail, row.rule).not.toBe('');
    });
  }
});
