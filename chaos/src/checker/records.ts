// A recorded call decoded once into typed fields, for the checker, the
// opportunity counts and the report alike: each reads `callOf(op)` rather
// than the request's and response's JSON. The decoding is memoized per
// operation (operations are immutable), so a run that checks its history,
// counts its opportunities and draws its report decodes each call once.
import { holderOf, responseOf, text, tokenOf } from './fields.js';
import type { Operation } from './history.js';

/** The lease an ok Acquire or Renew answered. */
export interface AnsweredLease {
  readonly resource: string;
  /** `owner#incarnation`. */
  readonly holder: string;
  /** 0n when absent (V2: a real token is above 0). */
  readonly token: bigint;
  /** 0 when absent. */
  readonly ttlMs: number;
}

/** What an ok call answered; every field is read from the response, absent fields as noted. */
export interface Answer {
  /** Acquire and Renew: EMPTY_LEASE when the response holds none. */
  readonly lease: AnsweredLease;
  /** Acquire: an R1 replay. */
  readonly replayed: boolean;
  /** Release. */
  readonly released: boolean;
  /** Write: APPLIED or REPLAYED as text; '' when absent. */
  readonly outcome: string;
  /** Write: the fence the sink reported; undefined when absent. */
  readonly fence?: bigint;
  /** Read: the payload found, as UTF-8 text. */
  readonly payload: string;
}

/**
 * One recorded call with its request's fields typed. Fields a method's
 * request does not carry are '' (text), 0n (tokens: V2 keeps real ones
 * above 0) or 0 (ttlMs).
 */
export interface Call {
  readonly op: Operation;
  readonly resource: string;
  /** `owner#incarnation` as the request names it (L4 matches both). */
  readonly holder: string;
  readonly token: bigint;
  readonly requestId: string;
  readonly resultId: string;
  /** A Write's payload, as UTF-8 text. */
  readonly payload: string;
  readonly ttlMs: number;
  /** Undefined unless the call ended ok. */
  readonly answer?: Answer;
  /** A refusal's reason, or its gRPC code when it carried none; '' for an ok call. */
  readonly reason: string;
}

const decoded = new WeakMap<Operation, Call>();

/** The operation's call, decoded on first use. Throws (SyntaxError) on a token that is not a decimal integer. */
export function callOf(op: Operation): Call {
  const known = decoded.get(op);
  if (known) return known;
  const { request } = op;
  const call: Call = {
    op,
    resource: text(request.resource),
    holder: holderOf(request),
    token: tokenOf(request.token),
    requestId: text(request.request_id),
    resultId: text(request.result_id),
    payload: text(request.payload),
    ttlMs: ttlOf(request),
    ...(op.outcome.type === 'ok' ? { answer: answerOf(op) } : {}),
    reason: op.outcome.type === 'ok' ? '' : op.outcome.reason || op.outcome.code,
  };
  decoded.set(op, call);
  return call;
}

/** Every operation's call, in their order. */
export const callsOf = (operations: readonly Operation[]): Call[] => operations.map(callOf);

/** The Writes among `calls`, in their order. */
export const writesOf = (calls: readonly Call[]): Call[] => calls.filter((c) => c.op.method === 'Write');

function ttlOf(fields: Readonly<Record<string, unknown>>): number {
  return Number(text(fields.ttl_ms)) || 0;
}

function answerOf(op: Operation): Answer {
  const response = responseOf(op);
  const { lease } = response;
  const fence = text(response.fence);
  return {
    lease: typeof lease === 'object' && lease !== null ? leaseOf(lease as Record<string, unknown>) : EMPTY_LEASE,
    replayed: response.replayed === true,
    released: response.released === true,
    outcome: text(response.outcome),
    ...(fence === '' ? {} : { fence: tokenOf(fence) }),
    payload: text(response.payload),
  };
}

function leaseOf(lease: Readonly<Record<string, unknown>>): AnsweredLease {
  return { resource: text(lease.resource), holder: holderOf(lease), token: tokenOf(lease.token), ttlMs: ttlOf(lease) };
}

/** How a response without a lease reads: every field absent. */
export const EMPTY_LEASE: AnsweredLease = Object.freeze(leaseOf({}));
