// The S6 negative control of issue 18: workers running the generator's
// `contended` mix (result ids that successive holders write again, retried
// with the same or another payload), with no fault at all, against the
// real sink and against one that overwrites a stored result with another
// payload instead of refusing RESULT_CONFLICT. The run goes on until a
// write naming an already-written result id with another payload was
// answered (an S6 opportunity); the checker judges both from the recorded
// history and the sink's final state alone.
import { describe, expect, it } from 'vitest';
import { eventually } from '@fencer/testkit';
import { variantBin } from '@fencer/variants';
import { mixWorkerArgs, opportunities, type Scenario } from '../../src/index.js';
import { scenario } from '../scenarios/helpers.js';

const WORKER = { ttlMs: 1_000, stepMs: 20, callTimeoutMs: 1_000, steps: 1 };

/** Two contended-mix workers on one resource until another payload was sent under a written result id. */
async function untilConflictingWrite(s: Scenario) {
  await Promise.all(
    ['worker-a', 'worker-b'].map((owner, i) => s.worker(owner, mixWorkerArgs('job', 'contended', i + 1, WORKER))),
  );
  await eventually(() => (opportunities(s.operations).S6 > 0 ? true : undefined), {
    timeoutMs: 45_000,
    intervalMs: 200,
    what: 'a write answered for a result id already sent with another payload',
  });
  return s.verdict();
}

// Real processes: a loaded machine makes them slower, never wrong.
describe('the contended workload against a sink that overwrites results', { timeout: 120_000 }, () => {
  it('the real sink refuses another payload under a written result id, and the history checks clean', async () => {
    const { history, violations } = await untilConflictingWrite(await scenario('result_conflicts_real'));
    expect(violations).toEqual([]);
    const refused = history.operations.filter((op) => op.method === 'Write' && op.outcome.type === 'fail');
    expect(refused.map((op) => op.outcome.type === 'fail' && op.outcome.reason)).toContain('RESULT_CONFLICT');
  });

  it('overwriting-sink is caught: S6', async () => {
    const s = await scenario('result_conflicts', { binaries: { sink: variantBin('overwriting-sink') } });
    const { violations } = await untilConflictingWrite(s);
    expect(violations.map((violation) => violation.rule)).toContain('S6');
  });
});
