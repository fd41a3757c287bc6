// How a recorded call's raw fields are read (records.ts decodes each call
// with these once): requests and responses come from JSON lines, so only
// strings, numbers and booleans are read, and uint64 fields are decimal
// strings.
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

/** The first item (in the given order) of each distinct `by` value. */
export function firstOfEach<T>(items: readonly T[], by: (item: T) => string): T[] {
  if (items.length < 2) return [...items];
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = by(item);
    return !seen.has(k) && seen.add(k);
  });
}
