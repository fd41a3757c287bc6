// The unit tests' MemorySink stands in for the real sink, so it must judge
// as the sink's own fence policy does (services/sink, F1 and F4 with A5's
// owner binding): every sequence of three AdvanceFences over a small
// alphabet (two tokens, two grant ids, two owners and none), and a Write of
// every token after each, gets the same verdict from both.
import { describe, expect, it } from 'vitest';
import { decideAdvance, decideWrite, type FenceRecord } from '@fencer/sink';
import { MemorySink } from './doubles/memory-sink.js';
import type { FenceAdvance } from '../src/core/sink-port.js';

const ADVANCES: FenceAdvance[] = [1n, 2n].flatMap((token) =>
  ['grant-1', 'grant-2'].flatMap((grantId) =>
    ['worker-a', 'worker-b', null].map((ownerId) => ({ resource: 'r', token, grantId, ownerId })),
  ),
);

/** The sink's verdicts, as the MemorySink words them. */
function bySinkPolicy(sequence: readonly FenceAdvance[]) {
  let current: FenceRecord | undefined;
  return sequence.map((advance) => {
    const decision = decideAdvance(current, advance);
    if (decision.kind === 'advanced')
      current = { fence: advance.token, grantId: advance.grantId, ownerId: advance.ownerId };
    const fence = current?.fence ?? 0n;
    const writes = [0n, 1n, 2n, 3n].map((token) => {
      const verdict = decideWrite(current, undefined, { token, payload: new Uint8Array(), writer: null }).kind;
      return verdict === 'apply' ? 'accepted' : verdict === 'stale' ? 'STALE_TOKEN' : 'TOKEN_NOT_ISSUED';
    });
    return { advance: decision.kind === 'regression' ? 'regression' : 'advanced', fence, writes };
  });
}

async function byMemorySink(sequence: readonly FenceAdvance[]) {
  const sink = new MemorySink();
  const verdicts = [];
  for (const advance of sequence) {
    const outcome = await sink.advanceFence(advance);
    const writes = [0n, 1n, 2n, 3n].map((token) => sink.judgeWrite('r', token));
    verdicts.push({ advance: outcome.kind, fence: sink.fence('r'), writes });
  }
  return verdicts;
}

describe('MemorySink agrees with the sink fence policy', () => {
  it(`on all ${ADVANCES.length ** 3} sequences of three AdvanceFences, and the Writes after each`, async () => {
    for (const a of ADVANCES)
      for (const b of ADVANCES)
        for (const c of ADVANCES) {
          const sequence = [a, b, c];
          expect(
            await byMemorySink(sequence),
            JSON.stringify(sequence, (_, v) => (typeof v === 'bigint' ? `${v}` : v)),
          ).toEqual(bySinkPolicy(sequence));
        }
  });
});
