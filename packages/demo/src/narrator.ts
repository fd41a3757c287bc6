// What the demo says, and what it checked: plain sentences as the story
// goes, each claim recorded with what was actually observed, and the table
// of every claim at the end.

/** One claim the demo made and whether what it observed bore it out. */
export interface Check {
  readonly step: number;
  readonly claim: string;
  readonly held: boolean;
  readonly observed: string;
}

/** Tells the story on `write` (a line at a time) and keeps the checks. */
export class Narrator {
  readonly checks: Check[] = [];
  readonly #write: (line: string) => void;
  #step = 0;

  constructor(write: (line: string) => void) {
    this.#write = write;
  }

  /** Opens step `n` with its title. */
  step(n: number, title: string): void {
    this.#step = n;
    this.#write('');
    this.#write(`Step ${n}. ${title}`);
  }

  /** One sentence of the story. */
  say(text: string): void {
    this.#write(`   ${text}`);
  }

  /** Records a claim of the current step; prints it with its verdict. */
  check(claim: string, held: boolean, observed: string): boolean {
    this.checks.push({ step: this.#step, claim, held, observed });
    this.#write(`   ${held ? '✓' : '✗'} ${claim}${held ? '' : ` (observed: ${observed})`}`);
    return held;
  }

  /** The table of every check; true when all held. */
  summary(): boolean {
    const held = this.checks.filter((c) => c.held).length;
    const claimWidth = Math.max(...this.checks.map((c) => c.claim.length), 5);
    this.#write('');
    this.#write(`${'step'.padEnd(5)}${'check'.padEnd(claimWidth + 2)}${'held'.padEnd(6)}observed`);
    for (const c of this.checks) {
      this.#write(
        `${String(c.step).padEnd(5)}${c.claim.padEnd(claimWidth + 2)}${(c.held ? 'yes' : 'NO').padEnd(6)}${c.observed}`,
      );
    }
    this.#write('');
    const all = held === this.checks.length && held > 0;
    this.#write(
      all ? `All ${held} checks held.` : `${this.checks.length - held} of ${this.checks.length} checks did NOT hold.`,
    );
    return all;
  }
}
