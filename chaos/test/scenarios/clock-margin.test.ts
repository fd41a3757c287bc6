// The clock margin the checker assumes is measured, not trusted: each
// worker answers round trips over its stdin and stdout at its start, and
// the verdict reports (and checks with) the bound they give; a worker whose
// clock reads ahead widens it.
import { describe, expect, it } from 'vitest';
import { libfaketime } from '../../src/index.js';
import { scenario, scripted } from './helpers.js';

describe('clock margin', { timeout: 120_000 }, () => {
  it("is measured at each worker's start and reported with the verdict", async () => {
    const s = await scenario('clock_margin');
    const a = await s.worker('worker-a', scripted('job', 3_000));
    // Round trips until one is quick enough, at most 20.
    const probes = a.events.filter((e) => e.event === 'clock').map((e) => e.probe);
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes).toEqual(Array.from({ length: Math.min(probes.length, 20) }, (_, i) => String(i + 1)));
    const measured = s.clockUncertaintyMs;
    // Processes of one machine: round trips over pipes, well under a TTL even on a loaded machine.
    expect(measured).toBeGreaterThanOrEqual(1);
    expect(measured).toBeLessThan(100);

    // A worker whose clock reads 300 ms ahead (libfaketime, unknown to the harness) widens it.
    await s.worker('worker-b', scripted('job', 3_000), {
      env: { LD_PRELOAD: libfaketime(), FAKETIME: '+0.3' },
    });
    const verdict = await s.verdict();
    expect(verdict.clockUncertaintyMs).toBe(s.clockUncertaintyMs);
    expect(verdict.clockUncertaintyMs).toBeGreaterThanOrEqual(300);
    expect(verdict.clockUncertaintyMs).toBeLessThan(400);
  });
});
