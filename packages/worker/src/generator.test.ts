import { describe, expect, it } from 'vitest';
import { MIXES, OperationGenerator, type Mix, type Step } from './generator.js';

const TTL_MS = 1_000;

/**
 * `n` steps of one worker of `mix`, answered by a simple model: an acquire
 * (or a reacquire) is granted the next token, a release or a pause ends the
 * hold; nothing else changes it.
 */
function run(mix: keyof typeof MIXES, seed: number, n: number, owner = 'worker-a') {
  const generator = new OperationGenerator(MIXES[mix], { seed, owner, ttlMs: TTL_MS });
  const steps: { step: Step; holding: boolean; token: bigint | undefined }[] = [];
  let holding = false;
  let token: bigint | undefined;
  for (let i = 0; i < n; i++) {
    const step = generator.next(holding, token);
    steps.push({ step, holding, token });
    if (step.kind === 'acquire' || step.kind === 'reacquire') [holding, token] = [true, (token ?? 0n) + 1n];
    if (step.kind === 'release' || (step.kind === 'write' && step.pauseMs > 0)) holding = false;
  }
  return steps;
}

describe('OperationGenerator', () => {
  it('draws the same steps from the same seed, and others from another', () => {
    expect(run('default', 7, 500)).toEqual(run('default', 7, 500));
    expect(run('default', 7, 500)).not.toEqual(run('default', 8, 500));
  });

  it.each(Object.keys(MIXES) as (keyof typeof MIXES)[])(
    '%s: every call, its shares of contended and retried result ids, and paused writes',
    (name) => {
      const mix: Mix = MIXES[name];
      const steps = run(name, 1, 5_000);
      const kinds = new Set(steps.map(({ step }) => step.kind));
      expect([...kinds].sort()).toEqual(['acquire', 'get-fence', 'reacquire', 'read', 'release', 'renew', 'write']);
      const writes = steps.flatMap(({ step, holding }) => (step.kind === 'write' ? [{ ...step, holding }] : []));
      // Contended: result ids named after the token's span, not the owner.
      const contended = writes.filter((w) => w.resultId.startsWith('c'));
      if (mix.contended > 0) expect(contended.length / writes.length).toBeGreaterThan(mix.contended * 0.8);
      else expect(contended).toEqual([]);
      // Retried: the previous write's result id again, with its payload and with another.
      const again = writes
        .slice(1)
        .flatMap((w, i) => (w.resultId === writes[i]!.resultId ? [{ w, before: writes[i]! }] : []));
      if (mix.retried > 0) {
        expect(again.some(({ w, before }) => w.payload === before.payload)).toBe(true);
        expect(again.some(({ w, before }) => w.payload !== before.payload)).toBe(true);
      } else expect(new Set(writes.map((w) => w.resultId)).size).toBe(writes.length);
      // Paused past the TTL, only by a holder: the stale write only the sink can refuse.
      const paused = writes.filter((w) => w.pauseMs > 0);
      expect(paused.length).toBeGreaterThan(0);
      for (const w of paused) {
        expect(w.holding).toBe(true);
        expect(w.pauseMs).toBeGreaterThanOrEqual(1.5 * TTL_MS);
        expect(w.pauseMs).toBeLessThanOrEqual(2.5 * TTL_MS);
      }
      // Twinned by a holder only: another payload under the same result id, sent at once.
      const twinned = writes.filter((w) => w.twin !== undefined);
      if (mix.twinned > 0) expect(twinned.length).toBeGreaterThan(0);
      else expect(twinned).toEqual([]);
      for (const w of twinned) {
        expect(w.holding).toBe(true);
        expect(w.twin).not.toBe(w.payload);
        // A result id nobody wrote before, where the sink's check and store can interleave.
        expect(writes.slice(0, writes.indexOf(w)).some((earlier) => earlier.resultId === w.resultId)).toBe(false);
      }
      // Writes without a lease too (the library knows it lost): the sink must judge them.
      expect(writes.some((w) => !w.holding)).toBe(true);
    },
  );

  it('never writes or renews before a first lease, nor releases or acquires while holding', () => {
    for (const { step, holding, token } of run('default', 3, 5_000)) {
      if (token === undefined) expect(['acquire', 'read', 'get-fence']).toContain(step.kind);
      if (holding) expect(['acquire', 'reacquire']).not.toContain(step.kind);
      else expect(step.kind).not.toBe('release');
    }
  });

  it('names contended result ids after the token, so successive holders of a resource share them', () => {
    const a = new OperationGenerator(
      { ...MIXES.default, contended: 1, retried: 0, twinned: 0 },
      { seed: 1, owner: 'a', ttlMs: 1 },
    );
    const b = new OperationGenerator(
      { ...MIXES.default, contended: 1, retried: 0, twinned: 0 },
      { seed: 2, owner: 'b', ttlMs: 1 },
    );
    const writes = (g: OperationGenerator, token: bigint) =>
      Array.from({ length: 200 }, () => g.next(true, token)).flatMap((s) => (s.kind === 'write' ? [s] : []));
    const ids = (g: OperationGenerator, token: bigint) => new Set(writes(g, token).map((w) => w.resultId));
    expect(ids(a, 8n)).toEqual(ids(b, 9n));
    expect([...ids(a, 12n)].some((id) => ids(b, 9n).has(id))).toBe(false);
    // Payloads name the writer and its token, so two holders never send the same bytes.
    for (const w of writes(b, 9n)) expect(w.payload).toMatch(/^b@9#\d+$/);
  });
});
