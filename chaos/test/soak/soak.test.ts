// `fencer chaos` as CI runs it: a two-minute seeded soak of real processes
// under every soak nemesis, checked S1–S6 and against the lock model; a run
// that ends as soon as a fault fails; and its command line's errors.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { fencerBin } from '@fencer/supervisor';
import { eventually, runFencer, tempDir } from '@fencer/testkit';
import { SOAK_KINDS } from '../../src/index.js';

/** A line of `--history` (chaos/src/history-export): the fields read here. */
interface HistoryEvent {
  time: number;
  process: string;
  f?: string;
  id?: number;
  value?: { request?: { resource?: string } };
  streamed?: true;
}

const SECONDS = Number(process.env.FENCER_SOAK_SECONDS ?? 120);
const dir = tempDir('fencer-soak-');

afterAll(() => dir.remove());

describe('fencer chaos', () => {
  it(
    `a ${SECONDS} s soak under every soak nemesis holds S1–S6 and the lock model`,
    async () => {
      const report = join(dir.path, 'soak.html');
      const history = join(dir.path, 'history.jsonl');
      const { code, stdout, stderr } = await runFencer(
        ['chaos', '--seconds', String(SECONDS), '--report', report, '--history', history],
        { timeoutMs: (SECONDS + 90) * 1_000 },
      );
      const seed = /seed (\d+)/.exec(stdout)?.[1];
      const lines = stdout.split('\n');
      // Between the report's and the history's lines and the verdict: each violation or unjudged
      // stretch, named (how many overlapping lease calls, from where), so a failure here says what
      // the checker saw.
      const findings = lines.slice(lines.findIndex((line) => line.startsWith('history: ')) + 1, -2);
      // A replay of the seed has other timing, so a failure also carries what the checker judged,
      // kept in the CI log: every fault's start and stop (unshared periods change what the lock
      // model judges), and the calls on the resources of the operations a finding names (#id), from
      // 10 s (ten TTLs) before the first of them is sent to the last one's answer.
      const events = readFileSync(history, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => ({ line, ...(JSON.parse(line) as HistoryEvent) }));
      const around = findings.flatMap((finding) => {
        const ids = new Set([...finding.matchAll(/#(\d+)/g)].map((m) => Number(m[1])));
        const named = events.filter((e) => ids.has(e.id ?? -1));
        const resources = new Set(named.map((e) => e.value?.request?.resource));
        const [from, to] = [Math.min(...named.map((e) => e.time)) - 10e9, Math.max(...named.map((e) => e.time))];
        return events.filter((e) => resources.has(e.value?.request?.resource) && e.time >= from && e.time <= to);
      });
      const shown = [...new Set([...events.filter((e) => e.process === 'nemesis'), ...around])]
        .sort((a, b) => a.time - b.time)
        .map((e) => e.line);
      expect(
        { code, verdict: lines.at(-2), findings, stderrTail: stderr.slice(-300) },
        `seed ${seed}; the faults, and the calls around what the findings name:\n${shown.join('\n')}`,
      ).toMatchObject({
        code: 0,
        verdict: 'verdict: S1–S6 and the lock model held',
        findings: [],
      });
      // Progress was shown while it ran, and every kind of fault struck.
      expect(stderr).toMatch(/operations \d+ {2}faults \d+ {2}violations 0/);
      const faults = /faults \(([^)]*)\)/.exec(stdout)![1]!;
      for (const kind of SOAK_KINDS) expect(faults, `seed ${seed}`).toMatch(new RegExp(`(^|, )${kind} \\d+`));
      expect(Number(/(\d+) acknowledged writes/.exec(stdout)![1])).toBeGreaterThan(100);
      // What held is the workers' default path: writes and lease calls as stream messages (issue 23).
      for (const f of ['write', 'acquire', 'release'])
        expect(
          events.some((e) => e.f === f && e.streamed === true && e.process !== 'nemesis'),
          f,
        ).toBe(true);
      // Every invariant had operations that could have broken it: the clean verdict means something.
      for (const rule of ['S1', 'S2', 'S3', 'S4', 'S5', 'S6']) {
        const count = new RegExp(`^ {2}${rule} +(\\d+) {2}`, 'm').exec(stdout)?.[1];
        expect(Number(count), `${rule} opportunities, seed ${seed}`).toBeGreaterThan(0);
      }
      // The timeline of the run: a lane per resource, the faults shaded (the browser test opens one).
      const html = readFileSync(report, 'utf8');
      for (const lane of ['job-1', 'job-2']) expect(html).toContain(`data-lane="${lane}"`);
      expect(html).toContain('class="fault');
    },
    (SECONDS + 120) * 1_000,
  );

  it('ends as soon as a fault fails, not at the planned end: a worker killed from outside', async () => {
    // Five minutes planned; the hang detector below gives it far less.
    const child = spawn(
      process.execPath,
      [fencerBin(), 'chaos', '--seconds', '300', '--workers', '2', '--resources', '1', '--seed', '5'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      // Once the workers run (progress is shown), one of them is killed.
      const worker = await eventually(
        () => {
          if (!/operations [1-9]/.test(stderr)) return undefined;
          const children = execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).split('\n');
          return children.find((pid) => pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('\0worker\0'));
        },
        { timeoutMs: 60_000, what: 'a worker of the soak' },
      );
      process.kill(Number(worker), 'SIGKILL');
      const code = await Promise.race([
        exited,
        sleep(90_000).then(() => Promise.reject(new Error(`still running 90 s after the kill\n${stderr}`))),
      ]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/fencer chaos: a worker died: .*; replay with: fencer chaos --seed 5 /);
    } finally {
      child.kill('SIGKILL');
    }
  }, 180_000);

  it.each([
    [['--seed', 'x'], "error: option '--seed <n>' argument 'x' is invalid. expected an integer from 0 to 4294967295"],
    [
      ['--seconds', '0'],
      "error: option '--seconds <n>' argument '0' is invalid. expected a positive integer, got \"0\"",
    ],
    [['--workers', '27'], 'error: --workers must be at most 26'],
    [
      ['--mix', 'x'],
      "error: option '--mix <name>' argument 'x' is invalid. Allowed choices are default, contended, stale, loop.",
    ],
  ])('rejects %j with one line and exit 1', async (args, message) => {
    const { code, stderr } = await runFencer(['chaos', ...args]);
    expect([code, stderr.trim()]).toEqual([1, message]);
  });
});
