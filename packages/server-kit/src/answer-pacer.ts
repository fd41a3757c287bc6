// Answers that become ready together leave in small groups, one group per
// event-loop turn. A group commit makes dozens of Writes durable at once
// (F6), and answering all of them in one turn kept every byte of them off
// the wire until the last was encoded: the client then took them all in one
// read and sent its next requests in one write, and client and server took
// turns on the two cores instead of working side by side (README, "Why the
// unary Write stays short at conc 64"). Sent a group per turn, the first
// answers reach the client while the server encodes the rest.
//
// Only the sending waits here: an answer is decided, and durable where the
// rule says so, before it is handed over. Answers leave in the order handed.

/** How many answers leave per event-loop turn, the rest waiting for the next (issue 23's A/B: 8). */
export const ANSWERS_PER_TURN = 8;

/** Sends at most `perTurn` answers per event-loop turn, in order; the rest on the turns after. */
export class AnswerPacer {
  readonly #perTurn: number;
  readonly #waiting: (() => void)[] = [];
  #left: number;
  #turnScheduled = false;

  constructor(perTurn = ANSWERS_PER_TURN) {
    if (!Number.isInteger(perTurn) || perTurn < 1)
      throw new RangeError(`perTurn must be a positive integer: ${perTurn}`);
    this.#perTurn = perTurn;
    this.#left = perTurn;
  }

  /** Runs `answer` now if this turn has room and nothing waits before it; else on a later turn. */
  send(answer: () => void): void {
    // Whatever this turn sends, the next one has the whole room again.
    this.#scheduleTurn();
    if (this.#left > 0 && this.#waiting.length === 0) {
      this.#left--;
      answer();
    } else {
      this.#waiting.push(answer);
    }
  }

  #scheduleTurn(): void {
    if (this.#turnScheduled) return;
    this.#turnScheduled = true;
    // setImmediate runs after this turn's I/O callbacks, and lets the
    // HTTP/2 frames of the answers sent so far leave first.
    setImmediate(() => this.#nextTurn());
  }

  #nextTurn(): void {
    this.#turnScheduled = false;
    const group = this.#waiting.splice(0, this.#perTurn);
    this.#left = this.#perTurn - group.length;
    // Before running them, so an answer that throws strands none behind it.
    if (group.length > 0) this.#scheduleTurn();
    for (const answer of group) answer();
  }
}
