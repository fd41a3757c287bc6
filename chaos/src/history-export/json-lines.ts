// A recorded history as JSON lines in Jepsen's shape, so that a run can be
// checked with other tools (Knossos, Elle, a script of one's own). Each
// call gives two events: its invocation, and its completion (ok, fail, or
// info when its outcome is unknown); each fault the nemesis applied gives
// its start and its end, as Jepsen's nemesis process does; all in time
// order. After them comes one line per resource with what the sink held at
// the end.
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FaultPeriod, History, Method, Operation } from '../checker/history.js';

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

/** Jepsen's name for the process that injects faults. */
const NEMESIS = 'nemesis';

/** An event's place among events at the same instant: invocations, then faults, then completions. */
const RANK = { invoke: 0, fault: 1, complete: 2 } as const;

type Event =
  | { readonly kind: 'invoke' | 'complete'; readonly time: number; readonly op: Operation }
  | { readonly kind: 'fault'; readonly time: number; readonly f: 'start' | 'stop'; readonly fault: FaultPeriod };

/**
 * The history as JSON lines, without their line feeds, yielded one at a time.
 *
 * First comes one event per invocation and per completion:
 * `{"index", "time", "process", "type", "f", "id", "value"}`. `time` is in
 * nanoseconds on the workers' shared clock, counted from the first event.
 * Events are in time order; at equal times invocations come first, so a
 * tie is never read as one call preceding another, and completions last,
 * so a fault at that instant reads as overlapping both. `id` is the
 * operation's number that the checker and the report cite; it pairs an
 * invocation with its completion, because a worker can have several calls
 * in flight. `value` is `{request}` on invocation. On completion it is
 * `{request, response}` for ok, and `{request, error: {code, reason}}` for
 * fail or info. Both events of a call sent as a stream message (a worker's
 * writes and lease calls, by default) carry `"streamed": true` as well.
 *
 * Among them, each fault gives `{"index", "time", "process": "nemesis",
 * "type": "info", "f": "start", "value": {fault, target}}` when it began
 * and the same with `"f": "stop"` when it healed (none for a fault still
 * on at the end). They carry no `id`: checkers of the calls skip them.
 *
 * Then comes one `{"type": "final", "resource", "fence", "results"}` per
 * resource the final state names, in name order. `fence` is left out when
 * the fence was not read back. `results` maps each result id read back to
 * `{token, payload}`, or to null when nothing is stored.
 */
export function* historyLines(history: History): Generator<string> {
  // Not Math.min(...): a long soak's history holds more calls than arguments fit on the stack.
  const originMs = Math.min(
    history.operations.reduce((min, op) => Math.min(min, op.invokedMs), Infinity),
    history.faults.reduce((min, fault) => Math.min(min, fault.startMs), Infinity),
  );
  const nanos = (ms: number) => Math.round((ms - originMs) * 1e6);
  const events: Event[] = [];
  for (const op of history.operations) {
    events.push(
      { kind: 'invoke', time: nanos(op.invokedMs), op },
      { kind: 'complete', time: nanos(op.completedMs), op },
    );
  }
  for (const fault of history.faults) {
    events.push({ kind: 'fault', time: nanos(fault.startMs), f: 'start', fault });
    if (fault.endMs !== undefined) events.push({ kind: 'fault', time: nanos(fault.endMs), f: 'stop', fault });
  }
  // Stable: faults at one instant stay in the order the nemesis recorded them.
  events.sort(
    (a, b) =>
      a.time - b.time ||
      RANK[a.kind] - RANK[b.kind] ||
      (a.kind !== 'fault' && b.kind !== 'fault' ? a.op.id - b.op.id : 0),
  );
  let index = 0;
  for (const event of events) {
    const { time } = event;
    if (event.kind === 'fault') {
      const { name, target } = event.fault;
      yield JSON.stringify({
        index: index++,
        time,
        process: NEMESIS,
        type: 'info',
        f: event.f,
        value: { fault: name, target },
      });
      continue;
    }
    const { op } = event;
    const done = event.kind === 'complete';
    yield JSON.stringify({
      index: index++,
      time,
      process: op.process,
      type: done ? TYPE[op.outcome.type] : 'invoke',
      f: F[op.method],
      id: op.id,
      value: done ? completion(op) : { request: op.request },
      ...(op.streamed ? { streamed: true } : {}),
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
