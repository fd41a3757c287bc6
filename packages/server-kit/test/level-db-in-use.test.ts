// T3's last sentence with real processes: two processes open one new data
// directory in the same millisecond, round after round. LevelDB's LOCK lets
// one in; the other may look at the files while the first is still creating
// them (a MANIFEST without CURRENT yet), and must still be told that the
// directory is in use, never that it is damaged. The children run the kit's
// dist, like every process test.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '@fencer/testkit';

const KIT = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const dir = tempDir('fencer-level-in-use-');
afterAll(() => dir.remove());

// Before the fix, about one round in seven was answered "damaged".
const ROUNDS = 60;

// Per line `ROUND AT` from stdin: lets go of the last round's directory,
// spins until the wall-clock millisecond AT, opens <root>/ROUND and prints
// the outcome as a JSON line, holding the directory if it got it.
const OPENER = `
const { openLevelDb } = await import(process.argv[1]);
const { createInterface } = await import('node:readline');
let held;
for await (const line of createInterface({ input: process.stdin })) {
  await held?.close();
  held = undefined;
  const [round, at] = line.split(' ');
  while (Date.now() < Number(at));
  let outcome = 'opened';
  try {
    held = await openLevelDb(process.argv[2] + '/' + round, { service: 'sink', format: '1', valueEncoding: 'utf8' });
  } catch (error) {
    outcome = error.message;
  }
  process.stdout.write(JSON.stringify(outcome) + '\\n');
}
await held?.close();
`;

/** A child running OPENER; `open` runs one round in it and resolves with the outcome. */
function opener() {
  const child = spawn(process.execPath, ['--input-type=module', '-e', OPENER, KIT, dir.path], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async open(round: number, at: number): Promise<string> {
      child.stdin.write(`${round} ${at}\n`);
      const { value, done } = await lines.next();
      if (done) throw new Error('the opener exited');
      return JSON.parse(value) as string;
    },
    end: () => new Promise((resolve) => child.stdin.end(resolve)),
  };
}

describe('two processes opening one new data directory at once (T3)', () => {
  it(`the one refused is told the directory is in use, never damaged (${ROUNDS} rounds)`, async () => {
    const openers = [opener(), opener()];
    const refusals: string[][] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        // Far enough ahead for both to have read the line, loaded machine or not.
        const at = Date.now() + 50;
        const outcomes = await Promise.all(openers.map((o) => o.open(round, at)));
        refusals.push(outcomes.filter((outcome) => outcome !== 'opened'));
      }
    } finally {
      await Promise.all(openers.map((o) => o.end()));
    }
    // Each round: one opened and held it, the other was told why not.
    expect(refusals).toEqual(
      refusals.map(() => [expect.stringMatching(/^data directory \S+ is in use by another process/)]),
    );
  }, 60_000);
});
