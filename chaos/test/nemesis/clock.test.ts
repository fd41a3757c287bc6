// The clock nemesis on a real Node process under libfaketime: a probe that
// reads performance.now() without pause and answers with its clock. Rate
// changes up and down never step that clock back (which rewriting the file
// with plain offset specs does, by seconds), its timers follow the rate, and
// every clock reading it reports lies within what the model allows: the
// inverse that the history relies on is never later than the answer's
// arrival, give or take the checker's floor of clock uncertainty (the probe
// fixed its time origin from the wall clock once, and a preemption while it
// did may set it ahead: a CI run under load saw 0.03 ms).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawnReady, stopChild, type ReadyChild } from '@fencer/supervisor';
import { tempDir } from '@fencer/testkit';
import { CLOCK_FLOOR_MS, clockSkew, FaketimeClock } from '../../src/index.js';

const dir = tempDir('fencer-nemesis-clock-');
afterAll(() => dir.remove());

// Counts every step back of performance.now() between two readings; answers
// `now` with its clock, and `after MS` with its clock once a timer of MS ms
// (on its own clock) has fired.
const PROBE = `
let last = performance.now();
let backs = 0;
const spin = () => {
  for (let i = 0; i < 200; i++) {
    const now = performance.now();
    if (now < last) backs += 1;
    last = now;
  }
  setImmediate(spin);
};
spin();
// Exits on SIGTERM, so that libfaketime removes its shared memory on the way out.
process.on('SIGTERM', () => process.exit(0));
const answer = () => process.stdout.write(JSON.stringify({ fakeMs: performance.timeOrigin + performance.now(), backs }) + '\\n');
process.stdout.write(JSON.stringify({ event: 'ready', service: 'probe', address: '-' }) + '\\n');
for await (const line of (await import('node:readline')).createInterface({ input: process.stdin })) {
  const [verb, ms] = line.split(' ');
  if (verb === 'after') setTimeout(answer, Number(ms));
  else answer();
}
`;
const probeScript = join(dir.path, 'probe.mjs');
writeFileSync(probeScript, PROBE);

interface Answer {
  readonly fakeMs: number;
  readonly backs: number;
  /** Shared clock: when the question went out and when the answer came in. */
  readonly sentMs: number;
  readonly receivedMs: number;
}

const sharedNowMs = () => performance.timeOrigin + performance.now();
const running: { clock: FaketimeClock; probe?: ReadyChild }[] = [];
afterEach(async () => {
  for (const { clock, probe } of running.splice(0)) {
    if (probe) await stopChild(probe, 2_000);
    clock.close();
  }
});

/** A probe on a clock of its own (or on `existing`, as a restart), and a way to ask it. */
async function probeOnClock(name: string, existing?: FaketimeClock) {
  const clock = existing ?? FaketimeClock.create(name);
  const started: (typeof running)[number] = { clock };
  running.push(started);
  const lines: string[] = [];
  let wake = () => {};
  const probe = await spawnReady(probeScript, [], {
    env: clock.env,
    onStdoutLine: (line) => {
      lines.push(line);
      wake();
    },
  });
  started.probe = probe;
  lines.length = 0; // the ready line
  const ask = async (question: string): Promise<Answer> => {
    const sentMs = sharedNowMs();
    probe.child.stdin!.write(`${question}\n`);
    while (lines.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    const answer = JSON.parse(lines.shift()!) as { fakeMs: number; backs: number };
    return { ...answer, sentMs, receivedMs: sharedNowMs() };
  };
  return { clock, ask };
}

describe('the clock nemesis', { timeout: 60_000 }, () => {
  it('changes the rate up and down with the clock never stepping back, and the model bounding every reading', async () => {
    const { clock, ask } = await probeOnClock('probe-rates');
    const windowMs = 200;
    const answers = [await ask('now')];
    for (const [i, rate] of [4, 0.25, 2, 0.5, 1, 4, 0.25, 4, 1, 0.5, 2, 1].entries()) {
      // Halfway, more than a window of real time: on a quiet machine all the
      // changes would otherwise fit in one window, and bound(windowMs) would
      // rightly equal bound().
      if (i === 6) await new Promise((resolve) => setTimeout(resolve, windowMs + 50));
      clock.setRate(rate);
      answers.push(await ask('now'), await ask('now'));
    }
    expect(answers.at(-1)!.backs).toBe(0);
    for (const answer of answers) {
      expect(clock.earliestSharedMs(answer.fakeMs)).toBeLessThanOrEqual(answer.receivedMs + CLOCK_FLOOR_MS);
    }
    expect(clock.bound().maxRate).toBe(4);
    // Over stretches of at most 200 ms the bound counts only the steps one such stretch spans, and still holds.
    const { maxRate, aheadMs } = clock.bound(windowMs);
    expect(aheadMs).toBeLessThan(clock.bound().aheadMs);
    for (const [i, earlier] of answers.entries()) {
      for (const later of answers.slice(i + 1).filter((a) => a.receivedMs - earlier.sentMs <= windowMs)) {
        expect(later.fakeMs - earlier.fakeMs).toBeLessThanOrEqual(
          maxRate * (later.receivedMs - earlier.sentMs) + aheadMs,
        );
      }
    }
  });

  it('a process restarted on the clock starts where the model is, at the real rate until it is up', async () => {
    const first = await probeOnClock('probe-restart');
    const { clock } = first;
    // Node fixes a time origin from two readings in a row, so one started at
    // x50 would read ahead of the model by their distance times 50 (2.7 ms
    // here, past the floor every time), at x4 by 7 ms once in CI.
    clock.setRate(50);
    await first.ask('now');
    await stopChild(running[0]!.probe!, 2_000);
    // A second of real time since the rewrite: fifty of the clock's, which a restart on the old spec would lose.
    const lostMs = 50 * 1_000;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    clock.restarting();
    expect(clock.rate).toBe(50);
    const { ask } = await probeOnClock('probe-restart', clock);
    clock.started();
    const before = await ask('now');
    // The restarted probe fixed a time origin of its own: the same floor as above.
    expect(clock.earliestSharedMs(before.fakeMs)).toBeLessThanOrEqual(before.receivedMs + CLOCK_FLOOR_MS);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const later = await ask('now');
    // Up, it runs at the rate set before the crash: far more than ten times the real time between the two readings.
    expect(later.fakeMs - before.fakeMs).toBeGreaterThan(10 * (later.sentMs - before.receivedMs));
    clock.setRate(1);
    const after = await ask('now');
    const readings = JSON.stringify({ before, later, after, bound: clock.bound() });
    expect(clock.earliestSharedMs(after.fakeMs), readings).toBeLessThanOrEqual(after.receivedMs + CLOCK_FLOOR_MS);
    const { maxRate, aheadMs } = clock.bound();
    expect(after.fakeMs - before.fakeMs).toBeLessThanOrEqual(maxRate * (after.receivedMs - before.sentMs) + aheadMs);
    // Not so loose that it would excuse that loss: the jump of the check above.
    expect(aheadMs).toBeLessThan(lostMs);
    expect(after.backs).toBe(0);
  });

  it('holds a rate asked for while a process restarts until it is up', () => {
    const clock = FaketimeClock.create('no-process');
    running.push({ clock });
    const spec = () => readFileSync(clock.file, 'utf8').trim();
    clock.setRate(3);
    clock.restarting();
    expect(spec()).toMatch(/ x1$/);
    clock.setRate(5);
    expect(clock.rate).toBe(5);
    expect(spec()).toMatch(/ x1$/);
    clock.started();
    expect(spec()).toMatch(/ x5$/);
    clock.started(); // once up, nothing more to do
    expect(spec()).toMatch(/ x5$/);
  });

  it('runs timers at the rate: slow ones late, fast ones far ahead of the shared clock', async () => {
    const { clock, ask } = await probeOnClock('probe-timers');
    expect(clock.bound()).toEqual({ maxRate: 1, aheadMs: 0 });

    clock.setRate(0.25);
    await ask('now'); // the new rate is read before the timer is set
    const slow = await ask('after 250');
    // 250 ms on a clock four times too slow take at least a second, less one of
    // the probe's milliseconds (4 real ones): libuv counts timers from its loop's
    // time in whole milliseconds, so one may fire up to a millisecond early.
    expect(slow.receivedMs - slow.sentMs).toBeGreaterThanOrEqual(1_000 - 4);

    clock.setRate(4);
    const before = await ask('now');
    const fast = await ask('after 4000');
    // Four seconds of its own time have passed, so its clock is well ahead of where the slow second left it.
    expect(fast.fakeMs - before.fakeMs).toBeGreaterThanOrEqual(4_000);
    expect(fast.fakeMs - fast.receivedMs).toBeGreaterThan(before.fakeMs - before.sentMs);
    expect(fast.backs).toBe(0);
    expect(clock.earliestSharedMs(fast.fakeMs)).toBeLessThanOrEqual(fast.receivedMs + CLOCK_FLOOR_MS);
  });

  it('as a nemesis: skews the rate, heals to the real rate, and records both', async () => {
    const { clock, ask } = await probeOnClock('probe-nemesis');
    const nemesis = clockSkew(clock, 'probe', 3);
    await nemesis.start();
    expect(clock.rate).toBe(3);
    await ask('now');
    const record = await nemesis.heal();
    expect(clock.rate).toBe(1);
    expect(record).toMatchObject({
      name: 'clock-skew',
      process: 'probe',
      detail: expect.stringMatching(/x3 .*; clock x1$/),
    });
    expect((await ask('now')).backs).toBe(0);
    expect(() => clock.setRate(0)).toThrow(RangeError);
  });
});
