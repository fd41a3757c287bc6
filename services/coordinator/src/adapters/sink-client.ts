// The SinkPort over gRPC: every call bounded by the sink deadline and sent
// without wait-for-ready (a down sink fails the Acquire fast, L3), with the
// coordinator's bearer token when one is configured (A1/A2), over TLS when
// the sink serves it.
import * as grpc from '@grpc/grpc-js';
import {
  bearer,
  channelCredentials,
  fencing,
  remoteFailure,
  unaryCall,
  type AdvanceFenceRequest,
  type AdvanceFenceResponse__Output,
  type GetFenceRequest,
  type GetFenceResponse__Output,
  type SinkClient,
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

  constructor(private readonly options: SinkClientOptions) {
    this.#client = new fencing.Sink(options.address, channelCredentials(options.tls), CHANNEL_OPTIONS);
  }

  /** F4 as an outcome; every failure but FENCE_REGRESSION is `unavailable` with the gRPC code name. At most two deadlines long. */
  async advanceFence({ resource, token, grantId, ownerId }: FenceAdvance): Promise<SinkAdvanceOutcome> {
    try {
      const response = await unaryCall<AdvanceFenceRequest, AdvanceFenceResponse__Output>(
        this.#client,
        this.#client.AdvanceFence,
        { resource, token: token.toString(), grant_id: grantId, owner_id: ownerId ?? '' },
        this.#callOptions(),
      );
      return { kind: 'advanced', fence: BigInt(response.fence) };
    } catch (error) {
      const failure = remoteFailure(error as grpc.ServiceError);
      if (failure.reason === 'FENCE_REGRESSION') {
        const fence = parseFence(failure.metadata.fence);
        if (fence !== null) return { kind: 'regression', fence };
        // A regression without a readable fence: ask for it rather than guess (L6).
        const reading = await this.getFence(resource);
        return reading.kind === 'fence' ? { kind: 'regression', fence: reading.fence } : reading;
      }
      return { kind: 'unavailable', sinkCode: codeName(failure.code) };
    }
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
