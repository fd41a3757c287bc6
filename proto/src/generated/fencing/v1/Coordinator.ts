// Original file: fencing/v1/coordinator.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AcquireRequest as _fencing_v1_AcquireRequest, AcquireRequest__Output as _fencing_v1_AcquireRequest__Output } from '../../fencing/v1/AcquireRequest.js';
import type { AcquireResponse as _fencing_v1_AcquireResponse, AcquireResponse__Output as _fencing_v1_AcquireResponse__Output } from '../../fencing/v1/AcquireResponse.js';
import type { DescribeRequest as _fencing_v1_DescribeRequest, DescribeRequest__Output as _fencing_v1_DescribeRequest__Output } from '../../fencing/v1/DescribeRequest.js';
import type { DescribeResponse as _fencing_v1_DescribeResponse, DescribeResponse__Output as _fencing_v1_DescribeResponse__Output } from '../../fencing/v1/DescribeResponse.js';
import type { ForceReleaseRequest as _fencing_v1_ForceReleaseRequest, ForceReleaseRequest__Output as _fencing_v1_ForceReleaseRequest__Output } from '../../fencing/v1/ForceReleaseRequest.js';
import type { ForceReleaseResponse as _fencing_v1_ForceReleaseResponse, ForceReleaseResponse__Output as _fencing_v1_ForceReleaseResponse__Output } from '../../fencing/v1/ForceReleaseResponse.js';
import type { LeaseStreamRequest as _fencing_v1_LeaseStreamRequest, LeaseStreamRequest__Output as _fencing_v1_LeaseStreamRequest__Output } from '../../fencing/v1/LeaseStreamRequest.js';
import type { LeaseStreamResponse as _fencing_v1_LeaseStreamResponse, LeaseStreamResponse__Output as _fencing_v1_LeaseStreamResponse__Output } from '../../fencing/v1/LeaseStreamResponse.js';
import type { ReleaseRequest as _fencing_v1_ReleaseRequest, ReleaseRequest__Output as _fencing_v1_ReleaseRequest__Output } from '../../fencing/v1/ReleaseRequest.js';
import type { ReleaseResponse as _fencing_v1_ReleaseResponse, ReleaseResponse__Output as _fencing_v1_ReleaseResponse__Output } from '../../fencing/v1/ReleaseResponse.js';
import type { RenewRequest as _fencing_v1_RenewRequest, RenewRequest__Output as _fencing_v1_RenewRequest__Output } from '../../fencing/v1/RenewRequest.js';
import type { RenewResponse as _fencing_v1_RenewResponse, RenewResponse__Output as _fencing_v1_RenewResponse__Output } from '../../fencing/v1/RenewResponse.js';

export interface CoordinatorClient extends grpc.Client {
  /**
   * Grants the resource if it is free or its lease expired (L2, L3): the
   * sink's fence is advanced durably before the grant is recorded and
   * answered. Retries with the same request_id return the recorded grant
   * with replayed=true (R1).
   */
  Acquire(argument: _fencing_v1_AcquireRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _fencing_v1_AcquireRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _fencing_v1_AcquireRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _fencing_v1_AcquireRequest, callback: grpc.requestCallback<_fencing_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Grants the resource if it is free or its lease expired (L2, L3): the
   * sink's fence is advanced durably before the grant is recorded and
   * answered. Retries with the same request_id return the recorded grant
   * with replayed=true (R1).
   */
  acquire(argument: _fencing_v1_AcquireRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencing_v1_AcquireRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencing_v1_AcquireRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _fencing_v1_AcquireRequest, callback: grpc.requestCallback<_fencing_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The valid lease, if any, and the last token granted.
   */
  Describe(argument: _fencing_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _fencing_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _fencing_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _fencing_v1_DescribeRequest, callback: grpc.requestCallback<_fencing_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The valid lease, if any, and the last token granted.
   */
  describe(argument: _fencing_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencing_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencing_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _fencing_v1_DescribeRequest, callback: grpc.requestCallback<_fencing_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Admin only (A4): ends the grant of `token` (valid, expired or released)
   * and, before answering, moves the sink's fence past it with a fresh token
   * that goes to no worker, so its holder's writes are refused STALE_TOKEN
   * and the next Acquire gets a larger token. Retry-safe by naming the
   * grant: once `token` is fenced off or superseded, a retry changes nothing
   * (forced=false), so it can never cut off a later holder.
   */
  ForceRelease(argument: _fencing_v1_ForceReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  ForceRelease(argument: _fencing_v1_ForceReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  ForceRelease(argument: _fencing_v1_ForceReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  ForceRelease(argument: _fencing_v1_ForceReleaseRequest, callback: grpc.requestCallback<_fencing_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Admin only (A4): ends the grant of `token` (valid, expired or released)
   * and, before answering, moves the sink's fence past it with a fresh token
   * that goes to no worker, so its holder's writes are refused STALE_TOKEN
   * and the next Acquire gets a larger token. Retry-safe by naming the
   * grant: once `token` is fenced off or superseded, a retry changes nothing
   * (forced=false), so it can never cut off a later holder.
   */
  forceRelease(argument: _fencing_v1_ForceReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  forceRelease(argument: _fencing_v1_ForceReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  forceRelease(argument: _fencing_v1_ForceReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  forceRelease(argument: _fencing_v1_ForceReleaseRequest, callback: grpc.requestCallback<_fencing_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * This project's extension of the contract (not in the shared
   * PROTOCOL.md): a worker's Acquires, Renews and Releases as messages of
   * one long-lived call, so that each costs a message rather than a call of
   * its own (issue 23: at concurrency 1 a unary call costs about five times
   * a message's CPU). Worker credential only (A1, A4), checked once, before
   * any message is read. Each request carries one of the three, judged
   * exactly as the unary call (L2–L5, R1–R4, A3, V1–V3, H4) and answered by
   * one response naming the request's call_id, in the order decided, not
   * sent. A refused message (LEASE_HELD, NOT_LEADER, SINK_UNAVAILABLE,
   * INVALID_ARGUMENT...) ends nothing; the stream ends with a status only
   * for what no later message could escape (UNAVAILABLE: the coordinator's
   * store failed or it is stopping; INTERNAL), and then every unanswered
   * message may or may not have taken effect: retry it as a unary call
   * would be retried (an Acquire with its request_id, R4). A coordinator
   * without it answers UNIMPLEMENTED: the unary calls stay the reference.
   */
  LeaseStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_LeaseStreamRequest, _fencing_v1_LeaseStreamResponse__Output>;
  LeaseStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_LeaseStreamRequest, _fencing_v1_LeaseStreamResponse__Output>;
  /**
   * This project's extension of the contract (not in the shared
   * PROTOCOL.md): a worker's Acquires, Renews and Releases as messages of
   * one long-lived call, so that each costs a message rather than a call of
   * its own (issue 23: at concurrency 1 a unary call costs about five times
   * a message's CPU). Worker credential only (A1, A4), checked once, before
   * any message is read. Each request carries one of the three, judged
   * exactly as the unary call (L2–L5, R1–R4, A3, V1–V3, H4) and answered by
   * one response naming the request's call_id, in the order decided, not
   * sent. A refused message (LEASE_HELD, NOT_LEADER, SINK_UNAVAILABLE,
   * INVALID_ARGUMENT...) ends nothing; the stream ends with a status only
   * for what no later message could escape (UNAVAILABLE: the coordinator's
   * store failed or it is stopping; INTERNAL), and then every unanswered
   * message may or may not have taken effect: retry it as a unary call
   * would be retried (an Acquire with its request_id, R4). A coordinator
   * without it answers UNIMPLEMENTED: the unary calls stay the reference.
   */
  leaseStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_LeaseStreamRequest, _fencing_v1_LeaseStreamResponse__Output>;
  leaseStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_LeaseStreamRequest, _fencing_v1_LeaseStreamResponse__Output>;
  
  /**
   * Frees the resource if owner, incarnation and token match the latest
   * grant (L5). Never an error for a mismatch: released=false.
   */
  Release(argument: _fencing_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _fencing_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _fencing_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _fencing_v1_ReleaseRequest, callback: grpc.requestCallback<_fencing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Frees the resource if owner, incarnation and token match the latest
   * grant (L5). Never an error for a mismatch: released=false.
   */
  release(argument: _fencing_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencing_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencing_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _fencing_v1_ReleaseRequest, callback: grpc.requestCallback<_fencing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Extends a valid lease held by exactly this owner, incarnation and token (L4).
   */
  Renew(argument: _fencing_v1_RenewRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_RenewResponse__Output>): grpc.ClientUnaryCall;
  Renew(argument: _fencing_v1_RenewRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_RenewResponse__Output>): grpc.ClientUnaryCall;
  Renew(argument: _fencing_v1_RenewRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_RenewResponse__Output>): grpc.ClientUnaryCall;
  Renew(argument: _fencing_v1_RenewRequest, callback: grpc.requestCallback<_fencing_v1_RenewResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Extends a valid lease held by exactly this owner, incarnation and token (L4).
   */
  renew(argument: _fencing_v1_RenewRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_RenewResponse__Output>): grpc.ClientUnaryCall;
  renew(argument: _fencing_v1_RenewRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_RenewResponse__Output>): grpc.ClientUnaryCall;
  renew(argument: _fencing_v1_RenewRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_RenewResponse__Output>): grpc.ClientUnaryCall;
  renew(argument: _fencing_v1_RenewRequest, callback: grpc.requestCallback<_fencing_v1_RenewResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface CoordinatorHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Grants the resource if it is free or its lease expired (L2, L3): the
   * sink's fence is advanced durably before the grant is recorded and
   * answered. Retries with the same request_id return the recorded grant
   * with replayed=true (R1).
   */
  Acquire: grpc.handleUnaryCall<_fencing_v1_AcquireRequest__Output, _fencing_v1_AcquireResponse>;
  
  /**
   * The valid lease, if any, and the last token granted.
   */
  Describe: grpc.handleUnaryCall<_fencing_v1_DescribeRequest__Output, _fencing_v1_DescribeResponse>;
  
  /**
   * Admin only (A4): ends the grant of `token` (valid, expired or released)
   * and, before answering, moves the sink's fence past it with a fresh token
   * that goes to no worker, so its holder's writes are refused STALE_TOKEN
   * and the next Acquire gets a larger token. Retry-safe by naming the
   * grant: once `token` is fenced off or superseded, a retry changes nothing
   * (forced=false), so it can never cut off a later holder.
   */
  ForceRelease: grpc.handleUnaryCall<_fencing_v1_ForceReleaseRequest__Output, _fencing_v1_ForceReleaseResponse>;
  
  /**
   * This project's extension of the contract (not in the shared
   * PROTOCOL.md): a worker's Acquires, Renews and Releases as messages of
   * one long-lived call, so that each costs a message rather than a call of
   * its own (issue 23: at concurrency 1 a unary call costs about five times
   * a message's CPU). Worker credential only (A1, A4), checked once, before
   * any message is read. Each request carries one of the three, judged
   * exactly as the unary call (L2–L5, R1–R4, A3, V1–V3, H4) and answered by
   * one response naming the request's call_id, in the order decided, not
   * sent. A refused message (LEASE_HELD, NOT_LEADER, SINK_UNAVAILABLE,
   * INVALID_ARGUMENT...) ends nothing; the stream ends with a status only
   * for what no later message could escape (UNAVAILABLE: the coordinator's
   * store failed or it is stopping; INTERNAL), and then every unanswered
   * message may or may not have taken effect: retry it as a unary call
   * would be retried (an Acquire with its request_id, R4). A coordinator
   * without it answers UNIMPLEMENTED: the unary calls stay the reference.
   */
  LeaseStream: grpc.handleBidiStreamingCall<_fencing_v1_LeaseStreamRequest__Output, _fencing_v1_LeaseStreamResponse>;
  
  /**
   * Frees the resource if owner, incarnation and token match the latest
   * grant (L5). Never an error for a mismatch: released=false.
   */
  Release: grpc.handleUnaryCall<_fencing_v1_ReleaseRequest__Output, _fencing_v1_ReleaseResponse>;
  
  /**
   * Extends a valid lease held by exactly this owner, incarnation and token (L4).
   */
  Renew: grpc.handleUnaryCall<_fencing_v1_RenewRequest__Output, _fencing_v1_RenewResponse>;
  
}

export interface CoordinatorDefinition extends grpc.ServiceDefinition {
  Acquire: MethodDefinition<_fencing_v1_AcquireRequest, _fencing_v1_AcquireResponse, _fencing_v1_AcquireRequest__Output, _fencing_v1_AcquireResponse__Output>
  Describe: MethodDefinition<_fencing_v1_DescribeRequest, _fencing_v1_DescribeResponse, _fencing_v1_DescribeRequest__Output, _fencing_v1_DescribeResponse__Output>
  ForceRelease: MethodDefinition<_fencing_v1_ForceReleaseRequest, _fencing_v1_ForceReleaseResponse, _fencing_v1_ForceReleaseRequest__Output, _fencing_v1_ForceReleaseResponse__Output>
  LeaseStream: MethodDefinition<_fencing_v1_LeaseStreamRequest, _fencing_v1_LeaseStreamResponse, _fencing_v1_LeaseStreamRequest__Output, _fencing_v1_LeaseStreamResponse__Output>
  Release: MethodDefinition<_fencing_v1_ReleaseRequest, _fencing_v1_ReleaseResponse, _fencing_v1_ReleaseRequest__Output, _fencing_v1_ReleaseResponse__Output>
  Renew: MethodDefinition<_fencing_v1_RenewRequest, _fencing_v1_RenewResponse, _fencing_v1_RenewRequest__Output, _fencing_v1_RenewResponse__Output>
}
