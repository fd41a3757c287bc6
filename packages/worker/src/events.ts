// What a worker process tells its supervisor: one JSON object per stdout
// line. Times are milliseconds on `performance.timeOrigin + performance.now()`,
// a high-resolution clock that processes on one machine share, so a
// supervisor can order events of several workers (never lease arithmetic:
// that stays on each keeper's monotonic clock).
import type { CallMethod } from '@fencer/client';

/**
 * An RPC as it leaves, before its outcome is known: a supervisor that
 * records histories needs it, since a worker killed mid-call never reports
 * the call's end, yet the call may have taken effect.
 */
export interface SendingEvent {
  readonly event: 'sending';
  /** Numbers this worker's calls; the call's `call` event repeats it. */
  readonly seq: number;
  readonly method: CallMethod;
  /** Sent as a message of a stream (the sink's WriteStream, the coordinator's LeaseStream), not as a unary call. */
  readonly streamed?: true;
  readonly request: Readonly<Record<string, unknown>>;
  readonly sentAtMs: number;
}

/** An RPC as the worker's library sent it and saw it end. */
export interface CallEvent {
  readonly event: 'call';
  /** The `seq` of the call's `sending` event. */
  readonly seq: number;
  readonly method: CallMethod;
  /** As in SendingEvent. */
  readonly streamed?: true;
  /** The request as sent, payload as UTF-8 text. */
  readonly request: Readonly<Record<string, unknown>>;
  readonly sentAtMs: number;
  readonly doneAtMs: number;
  /** 'ok', or the refusal's reason ('' when it had none). */
  readonly outcome: string;
  /** The gRPC status code name of a failure. */
  readonly code?: string;
  /** Whether the failure may be retried with the same request (an unknown outcome when true). */
  readonly retryable?: boolean;
  readonly response?: Readonly<Record<string, unknown>>;
}

/** Every line a worker prints. */
export type WorkerEvent =
  | { readonly event: 'ready'; readonly service: 'worker'; readonly owner: string; readonly address: string }
  | SendingEvent
  | CallEvent
  | {
      readonly event: 'acquired';
      readonly resource: string;
      readonly token: string;
      readonly requestId: string;
      readonly replayed: boolean;
      /** The name of the sink the grant names (P3), when the coordinator says. */
      readonly sink?: string;
    }
  | { readonly event: 'renewed'; readonly resource: string; readonly token: string; readonly remainingMs: number }
  | { readonly event: 'lease-lost'; readonly resource: string; readonly token: string; readonly reason: string }
  | {
      readonly event: 'written';
      readonly resource: string;
      readonly resultId: string;
      readonly outcome: 'applied' | 'replayed';
      readonly fence: string;
    }
  | {
      readonly event: 'read';
      readonly resource: string;
      readonly resultId: string;
      readonly payload: string;
      readonly token: string;
    }
  | { readonly event: 'released'; readonly resource: string; readonly released: boolean }
  | { readonly event: 'fence'; readonly resource: string; readonly fence: string }
  | {
      readonly event: 'described';
      readonly resource: string;
      /** The holder and token of the valid lease, if any. */
      readonly holder?: string;
      readonly token?: string;
      readonly lastToken: string;
    }
  | {
      readonly event: 'refused';
      readonly command: string;
      readonly reason: string;
      readonly code: string;
      readonly message: string;
      readonly details: Readonly<Record<string, string>>;
    }
  | { readonly event: 'error'; readonly message: string }
  /**
   * The answer to a `clock PROBE` line on stdin (any mode): its `atMs` is
   * this process's reading of the shared clock, for a supervisor to bound
   * how far the readings of its processes disagree (a round trip's bound).
   */
  | { readonly event: 'clock'; readonly probe: string };

/** The shared clock of worker events. */
export const eventClockMs = (): number => performance.timeOrigin + performance.now();

/** Prints one event as a JSON line, stamped with `atMs`. */
export function emit(event: WorkerEvent): void {
  process.stdout.write(JSON.stringify({ ...event, atMs: eventClockMs() }) + '\n');
}
