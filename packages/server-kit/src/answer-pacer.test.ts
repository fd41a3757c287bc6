// AnswerPacer: answers handed over in one turn leave a group per turn, in
// order; one answer at a time (concurrency 1) is never held back.
import { describe, expect, it } from 'vitest';
import { turn as nextTurn, turnCounter } from '@fencer/testkit';
import { AnswerPacer } from './answer-pacer.js';

/** Hands `count` answers to `pacer` in one turn; resolves with the turn each left in (0: at once). */
async function turnsOf(pacer: AnswerPacer, count: number): Promise<number[]> {
  const sentIn: number[] = [];
  const turns = turnCounter();
  for (let i = 0; i < count; i++) pacer.send(() => sentIn.push(turns.turn));
  for (let waited = 0; sentIn.length < count && waited < 100; waited++) await nextTurn();
  turns.stop();
  return sentIn;
}

describe('AnswerPacer', () => {
  it('sends answers handed over together a group per turn, in order', async () => {
    const pacer = new AnswerPacer(3);
    const order: number[] = [];
    for (let i = 0; i < 7; i++) pacer.send(() => order.push(i));
    expect(order).toEqual([0, 1, 2]);
    await nextTurn();
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    await nextTurn();
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('sends at once answers that come one per turn, however many', async () => {
    const pacer = new AnswerPacer(3);
    for (let i = 0; i < 10; i++) expect(await turnsOf(pacer, 1)).toEqual([0]);
  });

  it('gives a turn its room back: a second group handed over later leaves as the first did', async () => {
    const pacer = new AnswerPacer(2);
    expect(await turnsOf(pacer, 5)).toEqual([0, 0, 1, 1, 2]);
    // The turn after the last answer gives the room back.
    await nextTurn();
    expect(await turnsOf(pacer, 5)).toEqual([0, 0, 1, 1, 2]);
  });

  it('strands nothing behind an answer that throws', async () => {
    const pacer = new AnswerPacer(1);
    const sent: string[] = [];
    pacer.send(() => sent.push('first'));
    pacer.send(() => {
      throw new Error('boom');
    });
    pacer.send(() => sent.push('third'));
    const thrown = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
    await expect(thrown).resolves.toMatchObject({ message: 'boom' });
    await nextTurn();
    await nextTurn();
    expect(sent).toEqual(['first', 'third']);
  });

  it('refuses a room of less than one answer per turn', () => {
    expect(() => new AnswerPacer(0)).toThrow(RangeError);
  });
});
