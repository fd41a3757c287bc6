// The soak's verdict: safe, unsafe, or unknown when the lock model could not
// judge all of the history, each with its own exit status, so a script can
// tell a bug found from a run that proves nothing either way.
import { describe, expect, it } from 'vitest';
import { verdictOf } from './command.js';

const replay = 'fencer chaos --seed 7';
const violation = { rule: 'S3' as const, message: 'r: Write #3 (a) was accepted late', operations: [3] };
const unchecked = {
  rule: 'LOCK' as const,
  message:
    'job-1: unchecked from Release #47 (worker-a) on: 14 overlapping lease calls need more than 100000 search steps',
  operations: [47],
};

describe('verdictOf', () => {
  it('says safe, exit 0, only when nothing was found and everything was judged', () => {
    expect(verdictOf({ violations: [], unchecked: [] }, replay)).toEqual({
      lines: 'verdict: S1–S6 and the lock model held\n',
      exitCode: 0,
    });
  });

  it('says unknown, exit 2, when the lock model left a resource unchecked, naming where', () => {
    const { lines, exitCode } = verdictOf({ violations: [], unchecked: [unchecked] }, replay);
    expect(exitCode).toBe(2);
    expect(lines).toBe(
      `  LOCK: ${unchecked.message}\nverdict: unknown: no violation found, but the lock model could not judge 1 resource(s) past the point named; replay with: ${replay}\n`,
    );
  });

  it('says unsafe, exit 1, when anything was violated, unchecked parts or not', () => {
    const { lines, exitCode } = verdictOf({ violations: [violation], unchecked: [unchecked] }, replay);
    expect(exitCode).toBe(1);
    expect(lines.split('\n')).toEqual([
      `  S3: ${violation.message}`,
      `  LOCK: ${unchecked.message}`,
      `verdict: 1 violation(s); replay with: ${replay}`,
      '',
    ]);
  });
});
