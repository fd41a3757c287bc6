// A recorded history as JSON lines in Jepsen's shape, so that a run can be
// checked with other tools (Knossos, Elle, a script of one's own). Each
// call gives two events: its invocation, and its completion (ok, fail, or
// info when its outcome is unknown), all in time order. After them comes
// one line per resource with what the sink held at the end.
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { History, Method, Operation } from '../checker/history.js';

/** Jepsen's `f` for each method. */
const F: Readonly<Record<Method, string>> = {
  Acquire: 'acquire',
  Renew: 'renew',
  Release: 'release',
  Write: 'write',
  Read: 'read',
  GetFence: 'get-fence',
  Describe: 'describe',
};
const TYPE = { ok: 'ok', fail: 'fail', unknown: 'info' } as const;

/**
 * The history as JSON lines, without their line feeds, yielded one at a time.
 *
 * First comes one event per invocation and per completion:
 * `{"index", "time", "process", "type", "f", "id", "value"}`. `time` is in
 * nanoseconds on the workers' shared clock, counted from the first call's
 * sending. Events are in time order; at equal times invocations come first,
 * so a tie is never read as one call preceding another. `id` is the
 * operation's number that the checker and the report cite; it pairs an
 * invocation with its completion, because a worker can have several calls
 * in flight. `value` is `{request}` on invocation. On completion it is
 * `{request, response}` for ok, and `{request, error: {code, reason}}` for
 * fail or info.
 *
 * Then comes one `{"type": "final", "resource", "fence", "results"}` per
 * resource the final state names, in name order. `fence` is left out when
 * the fence was not read back. `results` maps each result id read back to
 * `{token, payload}`, or to null when nothing is stored.
 */
export function* historyLines(history: History): Generator<string> {
  const originMs = history.operations.reduce((min, op) => Math.min(min, op.invokedMs), Infinity);
  const nanos = (ms: number) => Math.round((ms - originMs) * 1e6);
  const events: { readonly op: Operation; readonly done: boolean; readonly time: number }[] = [];
  for (const op of history.operations) {
    events.push({ op, done: false, time: nanos(op.invokedMs) }, { op, done: true, time: nanos(op.completedMs) });
  }
  events.sort((a, b) => a.time - b.time || Number(a.done) - Number(b.done) || a.op.id - b.op.id);
  let index = 0;
  for (const { op, done, time } of events) {
    yield JSON.stringify({
      index: index++,
      time,
      process: op.process,
      type: done ? TYPE[op.outcome.type] : 'invoke',
      f: F[op.method],
      id: op.id,
      value: done ? completion(op) : { request: op.request },
    });
  }

  const { fences, results } = history.final;
  for (const resource of [...new Set([...Object.keys(fences), ...Object.keys(results)])].sort()) {
    const fence = fences[resource];
    yield JSON.stringify({
      type: 'final',
      resource,
      ...(fence === undefined ? {} : { fence }),
      results: results[resource] ?? {},
    });
  }
}

function completion({ request, outcome }: Operation) {
  return outcome.type === 'ok'
    ? { request, response: outcome.response }
    : { request, error: { code: outcome.code, reason: outcome.reason } };
}

/**
 * Writes the history to `path` as JSON lines (historyLines), creating its
 * folder and replacing any file there. The lines are streamed one at a
 * time, so a long run never builds one large string. Rejects with the
 * stream's error.
 */
export async function writeHistory(path: string, history: History): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await pipeline(Readable.from(terminated(historyLines(history))), createWriteStream(path));
}

function* terminated(lines: Iterable<string>): Generator<string> {
  for (const line of lines) yield `${line}\n`;
}
