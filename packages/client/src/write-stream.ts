// The sink's WriteStream as one long-lived object: `write()` sends one Write
// as one message and resolves with its own answer, matched by (resource,
// result_id), with the very receipt and typed errors a unary Write gives.
// Answers arrive as the sink decides them, in any order across resources.
//
// Failure semantics, what makes retrying safe: when the stream itself fails
// (the link drops, the sink stops or its store fails, an answer is overdue
// past the call timeout, or the sink answers a write it was not sent), the
// stream is cancelled and every write still unanswered on it rejects with
// UnavailableError: it may or may not have landed, and sending it again with
// the same result id is REPLAYED if it did (F3), which is what FencedWriter
// does. The next write opens a new stream. Only a stream refused for its
// credentials (UNAUTHENTICATED, PERMISSION_DENIED) rejects its writes with
// AuthError instead: the sink read none of them (A6), and retrying cannot
// help.
import * as grpc from '@grpc/grpc-js';
import {
  remoteFailureOfStatus,
  type WriteRequest,
  type WriteStreamRequest,
  type WriteStreamResponse__Output,
} from '@fencer/proto';
import { AuthError, FencerError, UnavailableError, toFencerError, typedError } from './errors.js';
import type { CallObserver, WriteReceipt } from './calls.js';

/** One Write, as FencedWriter and SinkConnection.write take it. */
export interface WriteFields {
  readonly resource: string;
  readonly token: bigint;
  readonly resultId: string;
  readonly payload: Uint8Array;
}

/** What a SinkWriteStream needs from its connection. */
export interface WriteStreamSettings {
  /** Opens one WriteStream call (with the connection's credentials). */
  readonly open: () => grpc.ClientDuplexStream<WriteStreamRequest, WriteStreamResponse__Output>;
  /** How long a write may wait for its answer before the stream counts as broken. */
  readonly timeoutMs: number;
  readonly observer?: CallObserver | undefined;
}

interface Pending {
  resolve(receipt: WriteReceipt): void;
  reject(error: FencerError): void;
}

/** (resource, result_id) as one map key; the resource's length keeps any two different pairs apart. */
const keyOf = (resource: string, resultId: string) => `${resource.length}:${resource}${resultId}`;

/**
 * One WriteStream call and the writes waiting for its answers. It fails as
 * a whole: once failed, it sends nothing more and every pending write has
 * been rejected.
 */
class StreamCall {
  readonly #call: grpc.ClientDuplexStream<WriteStreamRequest, WriteStreamResponse__Output>;
  /** Unanswered writes in the order they were sent, so the first is the one due soonest. */
  readonly #pending = new Map<string, { readonly settle: Pending; readonly dueAt: number }>();
  readonly #timeoutMs: number;
  /** Armed while writes are pending, for the first one's due time (one timer, not one per write). */
  #timer: NodeJS.Timeout | undefined;
  readonly #onFailed: (call: StreamCall) => void;
  #failed = false;

  constructor(settings: WriteStreamSettings, onFailed: (call: StreamCall) => void) {
    this.#timeoutMs = settings.timeoutMs;
    this.#onFailed = onFailed;
    this.#call = settings.open();
    this.#call.on('data', (answer: WriteStreamResponse__Output) => this.#answer(answer));
    // 'status' always comes; 'error' repeats a non-OK one (and must be listened to).
    this.#call.on('error', () => undefined);
    this.#call.on('status', (status: grpc.StatusObject) =>
      this.fail(
        status.code === grpc.status.OK
          ? failure(grpc.status.UNAVAILABLE, 'the sink ended the write stream')
          : toFencerError(Object.assign(new Error(status.details), status)),
      ),
    );
  }

  get failed(): boolean {
    return this.#failed;
  }

  /** Sends one write; `pending` settles with its answer or this call's failure. */
  send(key: string, request: WriteRequest, pending: Pending): void {
    this.#pending.set(key, { settle: pending, dueAt: performance.now() + this.#timeoutMs });
    this.#timer ??= setTimeout(() => this.#checkDue(), this.#timeoutMs);
    this.#call.write({ write: request });
  }

  /** Fails the call if its oldest unanswered write is overdue; else waits for that write's due time. */
  #checkDue(): void {
    this.#timer = undefined;
    const oldest = this.#pending.values().next();
    if (oldest.done) return;
    const left = oldest.value.dueAt - performance.now();
    if (left > 0) {
      this.#timer = setTimeout(() => this.#checkDue(), left);
      return;
    }
    this.fail(
      failure(
        grpc.status.DEADLINE_EXCEEDED,
        `no answer to a write within ${this.#timeoutMs} ms: the write stream counts as broken`,
      ),
    );
  }

  /** Half-closes: the sink answers what it has, then ends the call. */
  end(): void {
    if (!this.#failed) this.#call.end();
  }

  /** Cancels the call and rejects every pending write with what `error` means for it (see the file comment). */
  fail(error: FencerError): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#call.cancel();
    clearTimeout(this.#timer);
    const rejection = error instanceof AuthError ? error : unknownFate(error);
    for (const { settle } of this.#pending.values()) settle.reject(rejection);
    this.#pending.clear();
    this.#onFailed(this);
  }

  #answer(answer: WriteStreamResponse__Output): void {
    const key = keyOf(answer.resource, answer.result_id);
    const pending = this.#pending.get(key);
    if (!pending) {
      // Not a write this call is waiting for: nothing on it can be trusted to match.
      const pair = JSON.stringify({ resource: answer.resource, result_id: answer.result_id });
      this.fail(failure(grpc.status.INTERNAL, `the sink answered a write this stream is not waiting for: ${pair}`));
      return;
    }
    this.#pending.delete(key);
    if (this.#pending.size === 0) {
      // Nothing left to time: an idle stream holds no timer.
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const { settle } = pending;
    if (answer.written) {
      settle.resolve({
        outcome: answer.written.outcome === 'REPLAYED' ? 'replayed' : 'applied',
        fence: BigInt(answer.written.fence),
      });
    } else if (answer.refused) {
      settle.reject(typedError(remoteFailureOfStatus(answer.refused)));
    } else {
      settle.reject(failure(grpc.status.INTERNAL, 'the sink answered a write with neither a receipt nor a refusal'));
    }
  }
}

/** A failure this library decided, without a status from the sink. */
function failure(code: grpc.status, message: string): FencerError {
  return typedError({ code, reason: '', metadata: {}, fieldViolations: [], message });
}

/** A stream failure as seen by one write on it: its fate is unknown, so it is retryable with the same result id. */
function unknownFate(error: FencerError): UnavailableError {
  if (error instanceof UnavailableError) return error;
  return new UnavailableError(
    {
      code: grpc.status.UNAVAILABLE,
      reason: '',
      metadata: { stream_code: grpc.status[error.code] ?? String(error.code), stream_reason: error.reason },
      fieldViolations: [],
      message: `the write stream failed before this write was answered: ${error.message}`,
    },
    true,
  );
}

/**
 * A connection's WriteStream, opened on the first write and again on the
 * first write after a failure (see the file comment for what a failure does
 * to pending writes). Writes of different (resource, result_id) pairs go out
 * at once; a write of a pair still in flight waits for that one's answer, so
 * that no answer can be matched to the wrong one. Each write waits at most
 * the connection's call timeout for its answer. Writes go out as they come:
 * the caller bounds how many it has in flight (FencedWriter awaits each),
 * as the sink bounds what it reads (V4). Get it from
 * SinkConnection.writeStream(); the connection's close() closes it.
 */
export class SinkWriteStream {
  readonly #settings: WriteStreamSettings;
  #call: StreamCall | undefined;
  /** Per pair in flight: settles when its latest write has. */
  readonly #inFlight = new Map<string, Promise<unknown>>();
  #closed = false;

  constructor(settings: WriteStreamSettings) {
    this.#settings = settings;
  }

  /**
   * Write (F1–F3) as one message of the stream: the receipt, or the typed
   * error a unary Write would reject with (LeaseLostError, ResultConflictError,
   * InvalidRequestError, AuthError...), or UnavailableError when the stream
   * failed first. Prefer FencedWriter with `{ stream: true }`.
   */
  write(request: WriteFields): Promise<WriteReceipt> {
    const key = keyOf(request.resource, request.resultId);
    const before = this.#inFlight.get(key);
    // After the earlier write settles, whichever way: its refusal is its own.
    const send = () => this.#send(key, request);
    const sent = before ? before.then(send, send) : send();
    this.#inFlight.set(key, sent);
    const forget = () => {
      if (this.#inFlight.get(key) === sent) this.#inFlight.delete(key);
    };
    sent.then(forget, forget);
    return sent;
  }

  /** Half-closes the stream (the sink answers what it has) and refuses later writes. */
  close(): void {
    this.#closed = true;
    this.#call?.end();
  }

  #send(key: string, request: WriteFields): Promise<WriteReceipt> {
    const wire: WriteRequest = {
      resource: request.resource,
      token: request.token.toString(),
      result_id: request.resultId,
      payload: Buffer.from(request.payload),
    };
    const observed = this.#settings.observer?.({ method: 'Write', request: wire, streamed: true });
    return new Promise<WriteReceipt>((resolve, reject) => {
      if (this.#closed) {
        // A caller's bug, not a fault to retry through.
        reject(failure(grpc.status.INTERNAL, 'write on a closed write stream (its connection was closed)'));
        return;
      }
      const call = this.#open();
      call.send(key, wire, { resolve, reject });
    }).then(
      (receipt) => {
        observed?.({ ok: true, response: { outcome: receipt.outcome.toUpperCase(), fence: receipt.fence.toString() } });
        return receipt;
      },
      (error: FencerError) => {
        observed?.({ ok: false, error });
        throw error;
      },
    );
  }

  #open(): StreamCall {
    if (!this.#call || this.#call.failed) {
      this.#call = new StreamCall(this.#settings, (failed) => {
        if (this.#call === failed) this.#call = undefined;
      });
    }
    return this.#call;
  }
}
