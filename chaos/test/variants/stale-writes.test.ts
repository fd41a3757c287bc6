// The negative control of issue 18: workers running the generator's `stale`
// mix (fresh result ids only, many writes after a pause past the TTL or once
// the lease is known lost), with no fault at all, against the real sink and
// against one that accepts every stale write. The run goes on until a write
// has been answered that was sent after a grant of a higher token was
// acknowledged (an S3 opportunity): the real sink refuses it, and the
// broken one must store it, since its result id is new. The checker judges
// both from the recorded history and the sink's final state alone.
import { describe, expect, it } from 'vitest';
import { eventually } from '@fencer/testkit';
import { variantBin } from '@fencer/variants';
import { mixWorkerArgs, opportunities, type Scenario } from '../../src/index.js';
import { scenario } from '../scenarios/helpers.js';

const WORKER = { ttlMs: 500, stepMs: 20, callTimeoutMs: 1_000, steps: 1 };

/** Two stale-mix workers on one resource until a stale write was answered; then the verdict. */
async function untilStaleWrite(s: Scenario) {
  await Promise.all(
    ['worker-a', 'worker-b'].map((owner, i) => s.worker(owner, mixWorkerArgs('job', 'stale', i + 1, WORKER))),
  );
  await eventually(() => (opportunities(s.operations).S3 > 0 ? true : undefined), {
    timeoutMs: 45_000,
    intervalMs: 200,
    what: 'a write answered after a grant of a higher token was acknowledged',
  });
  return s.verdict();
}

// Real processes: a loaded machine makes them slower, never wrong.
describe('the generator workload against a sink that accepts every stale write', { timeout: 120_000 }, () => {
  it('the real sink refuses each stale write and the history checks clean', async () => {
    const { history, violations } = await untilStaleWrite(await scenario('stale_writes_real'));
    expect(violations).toEqual([]);
    const refused = history.operations.filter((op) => op.method === 'Write' && op.outcome.type === 'fail');
    expect(refused.map((op) => op.outcome.type === 'fail' && op.outcome.reason)).toContain('STALE_TOKEN');
  });

  it('stale-accepting-sink is caught: S3, and each stale write acknowledged under a fence it did not match', async () => {
    const s = await scenario('stale_writes', { binaries: { sink: variantBin('stale-accepting-sink') } });
    const { violations } = await untilStaleWrite(s);
    expect(violations.map((violation) => violation.rule)).toEqual(expect.arrayContaining(['S3', 'protocol']));
    for (const violation of violations) expect(violation.operations?.length).toBeGreaterThan(0);
  });
});
