// Waiting on events, never on time: bounded polling, hand-opened gates and
// event-loop turns, plus temporary directories for real data.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temporary directory under the OS's; `remove()` deletes it. */
export function tempDir(prefix = 'fencer-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * Polls `probe` until it returns a value other than undefined, at most
 * `timeoutMs`; the bound turns a hang into a clear failure.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = performance.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${options.what ?? 'a condition'}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
  }
}

/** Resolves on a later event-loop turn, after every callback already queued (I/O included) has run. */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A promise the test opens by hand, to hold an operation at one step. */
export function gate(): { open(): void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Whether `promise` has settled once every already-queued callback has run. */
export async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await turn();
  return settled;
}

/**
 * Counts event-loop turns from now until `stop()`, one setImmediate per
 * turn: code run in a turn reads `turn` to tell which turn it ran in. Made
 * before other code schedules its own setImmediate, it counts first in
 * every turn.
 */
export function turnCounter(): { readonly turn: number; stop(): void } {
  let turn = 0;
  let counting = true;
  const count = () => {
    if (!counting) return;
    turn++;
    setImmediate(count);
  };
  setImmediate(count);
  return {
    get turn() {
      return turn;
    },
    stop: () => {
      counting = false;
    },
  };
}
