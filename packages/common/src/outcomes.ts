// Helpers for code that switches over protocol outcomes and runs work in
// parallel; transport-free, so a service's core/ may use them.

/**
 * Marks the branch after an exhaustive switch: the compiler proves it
 * unreachable, and if a new outcome slips through anyway (an untyped value),
 * it throws a bug naming the value instead of answering nothing.
 */
export function unreachable(value: never): never {
  throw new Error(
    `bug: unhandled outcome ${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`,
  );
}

/**
 * Like Promise.all, but settles only once every promise has: nothing is left
 * running behind a rejection. Rejects with the first rejection in input order.
 */
export async function settleAll<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<T>).value);
}
