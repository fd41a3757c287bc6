// A coordinator replica's LeaseStream as one long-lived object: each
// Acquire, Renew or Release goes as one message and resolves with its own
// answer, matched by a call id, with the very response and typed errors the
// unary call gives (NotLeaderError naming the leader among them, H7). At
// concurrency 1 a message costs about a fifth of a unary call's CPU on both
// sides (issue 23), and a worker makes two or three of these per task.
//
// Failure semantics are the WriteStream's (stream-errors.ts): a stream that
// fails fails every message unanswered on it with a retryable
// UnavailableError, and the next message opens a new stream. Retrying is
// safe as it is for a unary call whose answer was lost: an Acquire keeps its
// request id (R4), a Renew or Release names the grant's token. A caller's
// shorter deadline or its AbortSignal ends only its own message, as the
// unary call would have ended (DEADLINE_EXCEEDED, CANCELLED); the
// coordinator may still decide it. A caller inside an OpenTelemetry span
// sends each message as a CLIENT span of its trace, the context in the
// message (the coordinator's span of the message is its child).
import * as grpc from '@grpc/grpc-js';
import {
  MessageStream,
  messageSpan,
  remoteFailureOfStatus,
  type AcquireRequest,
  type AcquireResponse__Output,
  type LeaseStreamRequest,
  type LeaseStreamResponse__Output,
  type ReleaseRequest,
  type ReleaseResponse__Output,
  type RenewRequest,
  type RenewResponse__Output,
  type StreamFailure,
} from '@fencer/proto';
import { typedError } from './errors.js';
import { bounded, localFailure, messageFailure, refusedBeforeSending, type MessageBounds } from './stream-errors.js';

/** What a LeaseStream needs from its connection. */
export interface LeaseStreamSettings {
  /** Opens one LeaseStream call to the replica (with the connection's credentials). */
  readonly open: () => grpc.ClientDuplexStream<LeaseStreamRequest, LeaseStreamResponse__Output>;
  /** How long a message may wait for its answer before the stream counts as broken. */
  readonly timeoutMs: number;
  /** The replica's channel: leaving READY (a GOAWAY) moves the stream to a new call. */
  readonly channel: grpc.ChannelInterface;
}

/** The three calls a LeaseStream carries, by their unary names, with their request and answer. */
export interface LeaseCalls {
  Acquire: [AcquireRequest, AcquireResponse__Output];
  Renew: [RenewRequest, RenewResponse__Output];
  Release: [ReleaseRequest, ReleaseResponse__Output];
}

/** One replica's LeaseStream; get it from CoordinatorConnection, whose close() closes it. */
export class LeaseStream {
  readonly #stream: MessageStream<LeaseStreamRequest, LeaseStreamResponse__Output>;
  readonly #timeoutMs: number;
  #lastCallId = 0;

  constructor(settings: LeaseStreamSettings) {
    this.#timeoutMs = settings.timeoutMs;
    this.#stream = new MessageStream({
      open: settings.open,
      timeoutMs: settings.timeoutMs,
      channel: settings.channel,
      keyOfAnswer: (answer) => answer.call_id,
      noun: 'lease call',
    });
  }

  /**
   * Sends `request` as one message: the unary call's response, or the typed
   * error it would have rejected with, or UnavailableError when the stream
   * failed first. Rejects with StreamUnimplementedError, having taken
   * effect nowhere, when the replica has no LeaseStream.
   */
  send<M extends keyof LeaseCalls>(
    method: M,
    request: LeaseCalls[M][0],
    bounds: MessageBounds,
  ): Promise<LeaseCalls[M][1]> {
    const refused = refusedBeforeSending(bounds);
    if (refused) return Promise.reject(refused);
    const callId = String(++this.#lastCallId);
    const call: Pick<LeaseStreamRequest, 'acquire' | 'renew' | 'release'> =
      method === 'Acquire' ? { acquire: request } : method === 'Renew' ? { renew: request } : { release: request };
    // A traced caller's message joins its trace, as its unary call would
    // through the grpc-js instrumentation; an untraced caller's carries none.
    const sent = messageSpan(`LeaseStream ${method}`, (carrier) =>
      this.#stream.send(callId, { call_id: callId, ...call, trace_context: carrier }),
    );
    const answered = sent.then(
      (answer) => answerOf(method, answer),
      (failed: StreamFailure) => {
        throw messageFailure(failed, 'lease call');
      },
    );
    return bounded(answered, bounds, this.#timeoutMs);
  }

  /** Half-closes the stream: the replica answers what it has. */
  close(): void {
    this.#stream.end();
  }
}

/** The response of `method` an answer carries, or the typed error of its refusal. */
function answerOf<M extends keyof LeaseCalls>(method: M, answer: LeaseStreamResponse__Output): LeaseCalls[M][1] {
  if (answer.refused) throw typedError(remoteFailureOfStatus(answer.refused));
  const response = method === 'Acquire' ? answer.acquired : method === 'Renew' ? answer.renewed : answer.released;
  if (response) return response;
  throw localFailure(grpc.status.INTERNAL, `the coordinator answered a ${method} with ${answer.answer ?? 'nothing'}`);
}
