// `fencer conformance` against the deliberately broken variants: each fails
// the rule it breaks, and only that rule (an implementation that keeps no
// request records breaks R1 and with it R2), where the real services hold
// them all (packages/conformance/test).
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFencer, startFencer, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';
import { variantBin, type VariantName } from '@fencer/variants';

const dir = tempDir('fencer-conformance-variants-');
const children: FencerProcess[] = [];
afterAll(async () => {
  await Promise.all(children.map((child) => stopFencer(child, 1_000)));
  dir.remove();
});

async function deployment(variant: VariantName, service: 'sink' | 'coordinator') {
  // The variant in its service's place, the real one in the other's.
  const binOf = (name: 'sink' | 'coordinator') => (service === name ? { bin: variantBin(variant) } : {});
  const sink = await startFencer(
    ['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir.path, `${variant}-sink`)],
    binOf('sink'),
  );
  children.push(sink);
  const coordinator = await startFencer(
    [
      'coordinator',
      '--insecure',
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

describe('fencer conformance against broken variants', () => {
  it.each<[VariantName, 'sink' | 'coordinator', string[]]>([
    ['lenient-sink', 'sink', ['F1']],
    ['overwriting-sink', 'sink', ['F3']],
    ['no-request-records-coordinator', 'coordinator', ['R1', 'R2']],
  ])('%s (a %s) fails exactly %j', async (variant, service, rules) => {
    const { sink, coordinator } = await deployment(variant, service);
    const run = await runFencer(['conformance', '--insecure', '--coordinator', coordinator, '--sink', sink, '--json']);
    expect(run.code, run.stderr).toBe(1);
    const rows = JSON.parse(run.stdout) as { rule: string; status: string; detail: string }[];
    expect(rows.filter((row) => row.status === 'failed').map((row) => row.rule)).toEqual(rules);
    for (const row of rows.filter((r) => r.status === 'failed')) expect(row.detail).not.toBe('');
  });
});
