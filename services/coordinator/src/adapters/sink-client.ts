// The SinkPort over gRPC: every call bounded by the sink deadline and sent
// without wait-for-ready (a down sink fails the Acquire fast, L3), with the
// coordinator's bearer token when one is configured (A1/A2), over TLS when
// the sink serves it.
//
// AdvanceFences go as messages of one long-lived AdvanceFenceStream: at
// concurrency 1 a unary call costs about five times a message's CPU (issue
// 23; README, "What a call costs against a message"), and a grant is on
// every worker's critical path. Its failure rules are the unary call's: an
// answer not come within the deadline, or a stream that broke, leaves the
// fence unknown (the token is burned, L3), and the next advance goes on a
// new stream. A sink of the shared contract alone answers the stream
// UNIMPLEMENTED; from then on this client uses the unary AdvanceFence.
import * as grpc from '@grpc/grpc-js';
import {
  bearer,
  channelCredentials,
  fencing,
  MessageStream,
  messageSpan,
  pairKey,
  remoteFailure,
  remoteFailureOfStatus,
  unaryCall,
  type AdvanceFenceRequest,
  type AdvanceFenceResponse__Output,
  type AdvanceFenceStreamRequest,
  type AdvanceFenceStreamResponse__Output,
  type GetFenceRequest,
  type GetFenceResponse__Output,
  type RemoteFailure,
  type SinkClient,
  type StreamFailure,
  type ClientTls,
} from '@fencer/proto';
import type { FenceAdvance, SinkAdvanceOutcome, SinkPort } from '../core/sink-port.js';

/** GetFence's outcome. */
export type FenceReading =
  { readonly kind: 'fence'; readonly fence: bigint } | { readonly kind: 'unavailable'; readonly sinkCode: string };

/** How to reach the sink. */
export interface SinkClientOptions {
  /** HOST:PORT of the sink. */
  readonly address: string;
  /** The coordinator's bearer token for the sink, or null when the sink runs --insecure. */
  readonly token: string | null;
  /** TLS to the sink (a client certificate too when the sink requires one); absent: plaintext. */
  readonly tls?: ClientTls | undefined;
  /** Deadline of every sink call, in ms (default 2000 in the CLI). */
  readonly deadlineMs: number;
}

// A restarted sink should be found again quickly: the channel's reconnect
// back-off would otherwise grow to minutes, failing every Acquire meanwhile.
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.min_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
  // No channelz reader exists; its per-call tracking is pure cost (issue 23).
  'grpc.enable_channelz': 0,
};

/** A SinkPort backed by a fencing.v1.Sink client. Never throws for remote failures. */
export class GrpcSinkClient implements SinkPort {
  readonly #client: SinkClient;
  readonly #advances: MessageStream<AdvanceFenceStreamRequest, AdvanceFenceStreamResponse__Output>;
  /** The sink has no AdvanceFenceStream (it answered UNIMPLEMENTED): unary calls from then on. */
  #unaryOnly = false;

  constructor(private readonly options: SinkClientOptions) {
    this.#client = new fencing.Sink(options.address, channelCredentials(options.tls), CHANNEL_OPTIONS);
    this.#advances = new MessageStream({
      // No deadline on the stream itself: each advance has its own (timeoutMs).
      open: () => this.#client.AdvanceFenceStream(this.#callOptions().metadata ?? new grpc.Metadata()),
      timeoutMs: options.deadlineMs,
      keyOfAnswer: (answer) => pairKey(answer.resource, answer.grant_id),
      noun: 'advance',
      // A sink's max connection age would otherwise close the stream with advances on it.
      channel: this.#client.getChannel(),
    });
  }

  /** F4 as an outcome; every failure but FENCE_REGRESSION is `unavailable` with the gRPC code name. At most two deadlines long. */
  async advanceFence(advance: FenceAdvance): Promise<SinkAdvanceOutcome> {
    const { resource, token, grantId, ownerId } = advance;
    const request = { resource, token: token.toString(), grant_id: grantId, owner_id: ownerId ?? '' };
    if (this.#unaryOnly) return this.#advanceUnary(request);
    try {
      const answer = await messageSpan('AdvanceFenceStream message', (carrier) =>
        this.#advances.send(pairKey(resource, grantId), { advance: request, trace_context: carrier }),
      );
      if (answer.advanced) return { kind: 'advanced', fence: BigInt(answer.advanced.fence) };
      if (answer.refused) return this.#refused(resource, remoteFailureOfStatus(answer.refused));
      return { kind: 'unavailable', sinkCode: 'INTERNAL' };
    } catch (error) {
      const failed = error as StreamFailure;
      if (failed.code === grpc.status.UNIMPLEMENTED) {
        // Refused before any message was read, so nothing was advanced: send it as the unary call.
        this.#unaryOnly = true;
        return this.#advanceUnary(request);
      }
      return { kind: 'unavailable', sinkCode: codeName(failed.code) };
    }
  }

  async #advanceUnary(request: AdvanceFenceRequest & { resource: string }): Promise<SinkAdvanceOutcome> {
    try {
      const response = await unaryCall<AdvanceFenceRequest, AdvanceFenceResponse__Output>(
        this.#client,
        this.#client.AdvanceFence,
        request,
        this.#callOptions(),
      );
      return { kind: 'advanced', fence: BigInt(response.fence) };
    } catch (error) {
      return this.#refused(request.resource, remoteFailure(error as grpc.ServiceError));
    }
  }

  /** A refused advance: FENCE_REGRESSION with the sink's fence, or `unavailable` with the code. */
  async #refused(resource: string, failure: RemoteFailure): Promise<SinkAdvanceOutcome> {
    if (failure.reason === 'FENCE_REGRESSION') {
      const fence = parseFence(failure.metadata.fence);
      if (fence !== null) return { kind: 'regression', fence };
      // A regression without a readable fence: ask for it rather than guess (L6).
      const reading = await this.getFence(resource);
      return reading.kind === 'fence' ? { kind: 'regression', fence: reading.fence } : reading;
    }
    return { kind: 'unavailable', sinkCode: codeName(failure.code) };
  }

  /** `resource`'s current fence (0 if never advanced), or `unavailable`; one deadline long. */
  async getFence(resource: string): Promise<FenceReading> {
    try {
      const response = await unaryCall<GetFenceRequest, GetFenceResponse__Output>(
        this.#client,
        this.#client.GetFence,
        { resource },
        this.#callOptions(),
      );
      return { kind: 'fence', fence: BigInt(response.fence) };
    } catch (error) {
      return { kind: 'unavailable', sinkCode: codeName(remoteFailure(error as grpc.ServiceError).code) };
    }
  }

  /** Closes the channel; calls after this fail as unavailable. */
  close(): void {
    this.#advances.end();
    this.#client.close();
  }

  #callOptions() {
    return {
      timeoutMs: this.options.deadlineMs,
      ...(this.options.token === null ? {} : { metadata: bearer(this.options.token) }),
    };
  }
}

function parseFence(value: string | undefined): bigint | null {
  return value !== undefined && /^\d{1,20}$/.test(value) ? BigInt(value) : null;
}

/** The gRPC code's name (UNAVAILABLE, DEADLINE_EXCEEDED...), what SINK_UNAVAILABLE reports as `sink_code`. */
function codeName(code: number): string {
  return grpc.status[code] ?? String(code);
}
