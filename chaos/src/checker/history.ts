// A recorded history, Jepsen style: every call a worker made, with when it
// was sent and when it ended on the clock the workers of one machine share,
// what it asked and how it ended (ok, a definite refusal, or unknown when
// the call may or may not have taken effect), plus the sink's final state
// read back at the end.
import type { CallEvent, SendingEvent } from '@fencer/worker';

/** Every RPC a history records. */
export type Method = CallEvent['method'];

/** How a call ended, as far as its caller can know. */
export type Outcome =
  | { readonly type: 'ok'; readonly response: Readonly<Record<string, unknown>> }
  /** Refused: the call certainly changed nothing. */
  | { readonly type: 'fail'; readonly code: string; readonly reason: string }
  /** Timed out, cut off, or failed inside: it may or may not have happened. */
  | { readonly type: 'unknown'; readonly code: string; readonly reason: string };

/** One call. `request` is as sent: snake_case fields, uint64 as decimal strings, payloads as UTF-8 text. */
export interface Operation {
  readonly id: number;
  /** Who called: a worker's owner id. */
  readonly process: string;
  readonly method: Method;
  readonly request: Readonly<Record<string, unknown>>;
  readonly invokedMs: number;
  readonly completedMs: number;
  readonly outcome: Outcome;
  /** Sent as a message of a stream (the sink's WriteStream, the coordinator's LeaseStream), not a unary call: judged alike. */
  readonly streamed?: true;
}

/** A stored result as read back at the end. */
export interface StoredResult {
  readonly token: string;
  readonly payload: string;
}

/**
 * The sink's state after the run (with several sinks, each resource's
 * owner's): each resource's fence, and each result id
 * any write named (null: nothing stored). A resource or result id left out
 * was not read back, and the checker does not judge the end for it.
 */
export interface FinalState {
  readonly fences: Readonly<Record<string, string>>;
  readonly results: Readonly<Record<string, Readonly<Record<string, StoredResult | null>>>>;
  /**
   * With sinks sharded by resource: what a sink held for a resource it does
   * not own (a fence, or a result on a sink without one), one line each. P4
   * says only the owner ever gets a fence, and a sink stores nothing
   * without one.
   */
  readonly misplaced?: readonly string[];
}

/** A fault as the nemesis applied it, for the report and for reading violations. */
export interface FaultPeriod {
  readonly name: string;
  readonly target: string;
  readonly startMs: number;
  readonly endMs?: number;
}

/**
 * Everything a run recorded. The checker assumes `operations` holds every
 * call made to the resources it names, those with an unknown outcome too: a
 * Write sent but never recorded could explain a stored result that the
 * checker would otherwise blame on the sink.
 */
export interface History {
  readonly operations: readonly Operation[];
  readonly final: FinalState;
  readonly faults: readonly FaultPeriod[];
}

// Codes after which a call may have been applied: the reply, not the
// request, may be what was lost, or the server failed after it acted.
const UNCERTAIN_CODES = new Set(['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'CANCELLED', 'UNKNOWN', 'INTERNAL']);
// ...except where the protocol says the failure granted nothing (L3 step 2).
const CERTAIN_REASONS = new Set(['SINK_UNAVAILABLE']);

/**
 * A call that was sent and whose end was never reported (its worker was
 * stopped or killed first): it may or may not have taken effect, up to
 * `untilMs`.
 */
export function operationInFlight(id: number, process: string, sending: SendingEvent, untilMs: number): Operation {
  return {
    id,
    process,
    method: sending.method,
    request: sending.request,
    invokedMs: sending.sentAtMs,
    completedMs: untilMs,
    outcome: { type: 'unknown', code: '', reason: 'NEVER_ANSWERED' },
  };
}

/** The operation a worker's call event records, numbered `id`. */
export function operationFromCall(id: number, process: string, call: CallEvent): Operation {
  const outcome: Outcome =
    call.outcome === 'ok'
      ? { type: 'ok', response: call.response ?? {} }
      : {
          type: UNCERTAIN_CODES.has(call.code ?? '') && !CERTAIN_REASONS.has(call.outcome) ? 'unknown' : 'fail',
          code: call.code ?? '',
          reason: call.outcome,
        };
  return {
    id,
    process,
    method: call.method,
    request: call.request,
    invokedMs: call.sentAtMs,
    completedMs: call.doneAtMs,
    outcome,
    ...(call.streamed ? { streamed: true } : {}),
  };
}
