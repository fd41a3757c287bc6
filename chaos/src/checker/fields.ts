// How the checkers read a recorded call: requests and responses come from
// JSON lines, so only strings, numbers and booleans are read, and uint64
// fields are decimal strings.
import type { Operation } from './history.js';

/** An acknowledged claim that `token` of `resource` is `holder`'s: an ok Acquire (fresh or replayed) or Renew. */
export interface Grant {
  readonly op: Operation;
  readonly resource: string;
  readonly token: bigint;
  readonly holder: string;
  /** An Acquire that minted its token (not an R1 replay). */
  readonly fresh: boolean;
}

/** A Write as sent, whatever became of it. */
export interface SentWrite {
  readonly op: Operation;
  readonly resource: string;
  readonly resultId: string;
  readonly token: bigint;
  readonly payload: string;
}

/** The Writes among `operations`, in their order, as sent. */
export function sentWrites(operations: readonly Operation[]): SentWrite[] {
  return operations
    .filter((op) => op.method === 'Write')
    .map((op) => ({
      op,
      resource: text(op.request.resource),
      resultId: text(op.request.result_id),
      token: tokenOf(op.request.token),
      payload: text(op.request.payload),
    }));
}

/** A string or number field as text; anything else as ''. */
export const text = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'bigint' ? String(value) : '';
/** A token field; 0 when absent. */
export const tokenOf = (value: unknown): bigint => BigInt(text(value) || '0');
/** `owner#incarnation`: who holds a lease (L4 matches both). */
export const holderOf = (fields: Readonly<Record<string, unknown>>) =>
  `${text(fields.owner_id)}#${text(fields.incarnation)}`;
export const responseOf = (op: Operation): Readonly<Record<string, unknown>> =>
  op.outcome.type === 'ok' ? op.outcome.response : {};
/** How a message names an operation: `Acquire #12 (worker-a)`. */
export const named = (op: Operation) => `${op.method} #${op.id} (${op.process})`;

export function groupBy<T>(items: readonly T[], by: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = by(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
