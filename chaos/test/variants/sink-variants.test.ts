// The sink variants against the real `fencer sink`, process to process over
// gRPC: the same calls, the real sink keeping F1/F2 and each variant
// visibly breaking its rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOrMissing, sinkCalls, tempDir, writeOutcome, type FencerProcess } from '@fencer/testkit';
import { startSinkProcess, stopAll } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let real: FencerProcess;
let lenient: FencerProcess;
let staleAccepting: FencerProcess;
let twoStep: FencerProcess;
beforeAll(async () => {
  dir = tempDir('fencer-variants-sink-');
  [real, lenient, staleAccepting, twoStep] = await Promise.all([
    startSinkProcess(dir.path),
    startSinkProcess(dir.path, 'lenient-sink'),
    startSinkProcess(dir.path, 'stale-accepting-sink'),
    startSinkProcess(dir.path, 'two-step-sink'),
  ]);
});
afterAll(async () => {
  await stopAll([real, lenient, staleAccepting, twoStep]);
  dir?.remove();
});

/** Fence 1, then a Write under token 2 (never issued) and a Write under token 2 once the fence is at 3. */
async function aboveThenBelowTheFence(address: string) {
  const sink = sinkCalls(address);
  try {
    await sink.advance({ resource: 'job', token: '1', grant_id: 'grant-1' });
    const above = await writeOutcome(
      sink.write({ resource: 'job', token: '2', result_id: 'invented', payload: Buffer.from('invented') }),
    );
    const stored = await readOrMissing(sink, 'job', 'invented');
    const fence = (await sink.getFence('job')).fence;
    await sink.advance({ resource: 'job', token: '3', grant_id: 'grant-3' });
    const below = await writeOutcome(
      sink.write({ resource: 'job', token: '2', result_id: 'late', payload: Buffer.from('late') }),
    );
    return { above, stored: stored?.token, fence, below };
  } finally {
    sink.close();
  }
}

describe('lenient-sink (F1 broken)', () => {
  it('applies a Write whose token is above the fence, which the real sink refuses TOKEN_NOT_ISSUED', async () => {
    expect(await aboveThenBelowTheFence(real.address)).toEqual({
      above: { outcome: 'TOKEN_NOT_ISSUED', fence: '1' },
      stored: undefined,
      fence: '1',
      below: { outcome: 'STALE_TOKEN', fence: '3' },
    });
    // Stored under token 2 while the fence stays at 1; a stale token is still refused.
    expect(await aboveThenBelowTheFence(lenient.address)).toEqual({
      above: { outcome: 'APPLIED', fence: '1' },
      stored: '2',
      fence: '1',
      below: { outcome: 'STALE_TOKEN', fence: '3' },
    });
  });
});

describe('stale-accepting-sink (F1 broken)', () => {
  it('applies a Write whose token is below the fence, which the real sink refuses STALE_TOKEN', async () => {
    // Answered under the fence it did not match, which stays where it was; an invented token is still refused.
    expect(await aboveThenBelowTheFence(staleAccepting.address)).toEqual({
      above: { outcome: 'TOKEN_NOT_ISSUED', fence: '1' },
      stored: undefined,
      fence: '1',
      below: { outcome: 'APPLIED', fence: '3' },
    });
  });
});

/**
 * One round on a fresh resource: fence at 1, `n` token-1 writes on two
 * channels racing an AdvanceFence(2) on a third; every result id is read
 * once the advance is acknowledged. Resolves with the result ids that were
 * APPLIED under token 1 yet not stored when the advance was acknowledged
 * (S3 broken), with what they finally hold.
 */
async function staleAfterAdvance(address: string, resource: string, n: number) {
  const coordinator = sinkCalls(address);
  const workers = [sinkCalls(address), sinkCalls(address)];
  try {
    await coordinator.advance({ resource, token: '1', grant_id: `${resource}-1` });
    // Connected channels, so the writes reach the sink before the advance does.
    await Promise.all(workers.map((worker) => worker.getFence(resource)));
    const ids = Array.from({ length: n }, (_, i) => `w-${i}`);
    const racing = ids.map((id, i) =>
      writeOutcome(workers[i % 2]!.write({ resource, token: '1', result_id: id, payload: Buffer.from(id) })),
    );
    await coordinator.advance({ resource, token: '2', grant_id: `${resource}-2` });
    const afterAdvance = await Promise.all(ids.map((id) => readOrMissing(coordinator, resource, id)));
    const outcomes = await Promise.all(racing);
    const stale = ids.filter((_, i) => outcomes[i]!.outcome === 'APPLIED' && afterAdvance[i] === undefined);
    return await Promise.all(
      stale.map(async (id) => ({ id, finally: (await readOrMissing(coordinator, resource, id))?.token })),
    );
  } finally {
    for (const client of [coordinator, ...workers]) client.close();
  }
}

describe('two-step-sink (F2 broken)', () => {
  it('lets a token-1 write racing AdvanceFence(2) land after the advance was acknowledged; the real sink never does', async () => {
    for (let round = 0; round < 3; round++)
      expect(await staleAfterAdvance(real.address, `real-${round}`, 20)).toEqual([]);
    let stale: Awaited<ReturnType<typeof staleAfterAdvance>> = [];
    // A round shows it unless the advance's fsync outlasts the variant's pause; under load some do.
    for (let round = 0; round < 30 && stale.length === 0; round++)
      stale = await staleAfterAdvance(twoStep.address, `two-step-${round}`, 20);
    expect(stale.length).toBeGreaterThan(0);
    // Missing right after the advance, stored under the old token for good.
    for (const write of stale) expect(write.finally).toBe('1');
  });
});
