// What a worker's calls are, as observers (the worker's event log, the
// chaos suite's history) see them, and what a Write answers.
import type { FencerError } from './errors.js';

/** Every RPC a worker sends, by service. */
export type CallMethod = 'Acquire' | 'Renew' | 'Release' | 'Describe' | 'Write' | 'Read' | 'GetFence';

/**
 * One call as it leaves: the method and the request exactly as sent (tokens
 * as decimal strings). A Write sent as a message of the connection's
 * WriteStream is a 'Write' too, `streamed`: the same operation, judged by
 * the same rules.
 */
export interface SentCall {
  readonly method: CallMethod;
  readonly request: object;
  /** HOST:PORT the call went to: which replica, for a coordinator over several (H7). */
  readonly address?: string;
  readonly streamed?: true;
}

/** How one call ended: its response, or the typed error it was refused or lost with. */
export type CallOutcome =
  { readonly ok: true; readonly response: object } | { readonly ok: false; readonly error: FencerError };

/**
 * Sees every call of a connection: called as the call is sent, it returns
 * the function that is called once with the call's outcome. It must not
 * throw; it runs inside the call path.
 */
export type CallObserver = (call: SentCall) => (outcome: CallOutcome) => void;

/** What the sink did with a Write: stored it now, or found the same payload already stored (F3). */
export interface WriteReceipt {
  readonly outcome: 'applied' | 'replayed';
  /** The resource's fence when the write was accepted (equal to the token, F1). */
  readonly fence: bigint;
}
