// Original file: fencing/v1/sink.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AdvanceFenceRequest as _fencing_v1_AdvanceFenceRequest, AdvanceFenceRequest__Output as _fencing_v1_AdvanceFenceRequest__Output } from '../../fencing/v1/AdvanceFenceRequest.js';
import type { AdvanceFenceResponse as _fencing_v1_AdvanceFenceResponse, AdvanceFenceResponse__Output as _fencing_v1_AdvanceFenceResponse__Output } from '../../fencing/v1/AdvanceFenceResponse.js';
import type { AdvanceFenceStreamRequest as _fencing_v1_AdvanceFenceStreamRequest, AdvanceFenceStreamRequest__Output as _fencing_v1_AdvanceFenceStreamRequest__Output } from '../../fencing/v1/AdvanceFenceStreamRequest.js';
import type { AdvanceFenceStreamResponse as _fencing_v1_AdvanceFenceStreamResponse, AdvanceFenceStreamResponse__Output as _fencing_v1_AdvanceFenceStreamResponse__Output } from '../../fencing/v1/AdvanceFenceStreamResponse.js';
import type { GetFenceRequest as _fencing_v1_GetFenceRequest, GetFenceRequest__Output as _fencing_v1_GetFenceRequest__Output } from '../../fencing/v1/GetFenceRequest.js';
import type { GetFenceResponse as _fencing_v1_GetFenceResponse, GetFenceResponse__Output as _fencing_v1_GetFenceResponse__Output } from '../../fencing/v1/GetFenceResponse.js';
import type { ListResultsRequest as _fencing_v1_ListResultsRequest, ListResultsRequest__Output as _fencing_v1_ListResultsRequest__Output } from '../../fencing/v1/ListResultsRequest.js';
import type { ListResultsResponse as _fencing_v1_ListResultsResponse, ListResultsResponse__Output as _fencing_v1_ListResultsResponse__Output } from '../../fencing/v1/ListResultsResponse.js';
import type { ReadRequest as _fencing_v1_ReadRequest, ReadRequest__Output as _fencing_v1_ReadRequest__Output } from '../../fencing/v1/ReadRequest.js';
import type { ReadResponse as _fencing_v1_ReadResponse, ReadResponse__Output as _fencing_v1_ReadResponse__Output } from '../../fencing/v1/ReadResponse.js';
import type { WriteRequest as _fencing_v1_WriteRequest, WriteRequest__Output as _fencing_v1_WriteRequest__Output } from '../../fencing/v1/WriteRequest.js';
import type { WriteResponse as _fencing_v1_WriteResponse, WriteResponse__Output as _fencing_v1_WriteResponse__Output } from '../../fencing/v1/WriteResponse.js';
import type { WriteStreamRequest as _fencing_v1_WriteStreamRequest, WriteStreamRequest__Output as _fencing_v1_WriteStreamRequest__Output } from '../../fencing/v1/WriteStreamRequest.js';
import type { WriteStreamResponse as _fencing_v1_WriteStreamResponse, WriteStreamResponse__Output as _fencing_v1_WriteStreamResponse__Output } from '../../fencing/v1/WriteStreamResponse.js';

export interface SinkClient extends grpc.Client {
  /**
   * Moves the resource's fence to `token` (F4). Coordinator credential only (A1).
   * Succeeds if token > fence, or if the same grant_id already set this token.
   * Otherwise FAILED_PRECONDITION / FENCE_REGRESSION with the current fence.
   * The fence is stored bound to owner_id (A5). Answered only once the new
   * fence is durable (F6).
   */
  AdvanceFence(argument: _fencing_v1_AdvanceFenceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_AdvanceFenceResponse__Output>): grpc.ClientUnaryCall;
  AdvanceFence(argument: _fencing_v1_AdvanceFenceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_AdvanceFenceResponse__Output>): grpc.ClientUnaryCall;
  AdvanceFence(argument: _fencing_v1_AdvanceFenceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_AdvanceFenceResponse__Output>): grpc.ClientUnaryCall;
  AdvanceFence(argument: _fencing_v1_AdvanceFenceRequest, callback: grpc.requestCallback<_fencing_v1_AdvanceFenceResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Moves the resource's fence to `token` (F4). Coordinator credential only (A1).
   * Succeeds if token > fence, or if the same grant_id already set this token.
   * Otherwise FAILED_PRECONDITION / FENCE_REGRESSION with the current fence.
   * The fence is stored bound to owner_id (A5). Answered only once the new
   * fence is durable (F6).
   */
  advanceFence(argument: _fencing_v1_AdvanceFenceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_AdvanceFenceResponse__Output>): grpc.ClientUnaryCall;
  advanceFence(argument: _fencing_v1_AdvanceFenceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_AdvanceFenceResponse__Output>): grpc.ClientUnaryCall;
  advanceFence(argument: _fencing_v1_AdvanceFenceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_AdvanceFenceResponse__Output>): grpc.ClientUnaryCall;
  advanceFence(argument: _fencing_v1_AdvanceFenceRequest, callback: grpc.requestCallback<_fencing_v1_AdvanceFenceResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * This project's extension of the contract (not in the shared
   * PROTOCOL.md): many AdvanceFences on one call, so that a coordinator's
   * grant costs a message on an open stream rather than a call of its own.
   * Coordinator credential only (A1, A4), checked once, before any message
   * is read. Each request carries one AdvanceFence, judged exactly as the
   * unary call (F4, A5, F6, V1–V3) and answered by one response naming its
   * resource and grant_id, once durable. Answers come as advances are
   * decided: match them by (resource, grant_id), and send a second advance
   * of the same pair only once the first is answered. A refused message
   * (FENCE_REGRESSION, INVALID_ARGUMENT) ends nothing; the stream ends with
   * a status, as WriteStream's does, only for what no later message could
   * escape (UNAVAILABLE, INTERNAL). A sink without it answers UNIMPLEMENTED:
   * the unary AdvanceFence stays the reference.
   */
  AdvanceFenceStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_AdvanceFenceStreamRequest, _fencing_v1_AdvanceFenceStreamResponse__Output>;
  AdvanceFenceStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_AdvanceFenceStreamRequest, _fencing_v1_AdvanceFenceStreamResponse__Output>;
  /**
   * This project's extension of the contract (not in the shared
   * PROTOCOL.md): many AdvanceFences on one call, so that a coordinator's
   * grant costs a message on an open stream rather than a call of its own.
   * Coordinator credential only (A1, A4), checked once, before any message
   * is read. Each request carries one AdvanceFence, judged exactly as the
   * unary call (F4, A5, F6, V1–V3) and answered by one response naming its
   * resource and grant_id, once durable. Answers come as advances are
   * decided: match them by (resource, grant_id), and send a second advance
   * of the same pair only once the first is answered. A refused message
   * (FENCE_REGRESSION, INVALID_ARGUMENT) ends nothing; the stream ends with
   * a status, as WriteStream's does, only for what no later message could
   * escape (UNAVAILABLE, INTERNAL). A sink without it answers UNIMPLEMENTED:
   * the unary AdvanceFence stays the reference.
   */
  advanceFenceStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_AdvanceFenceStreamRequest, _fencing_v1_AdvanceFenceStreamResponse__Output>;
  advanceFenceStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_AdvanceFenceStreamRequest, _fencing_v1_AdvanceFenceStreamResponse__Output>;
  
  /**
   * The resource's current fence; 0 when it has never been advanced.
   */
  GetFence(argument: _fencing_v1_GetFenceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_GetFenceResponse__Output>): grpc.ClientUnaryCall;
  GetFence(argument: _fencing_v1_GetFenceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_GetFenceResponse__Output>): grpc.ClientUnaryCall;
  GetFence(argument: _fencing_v1_GetFenceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_GetFenceResponse__Output>): grpc.ClientUnaryCall;
  GetFence(argument: _fencing_v1_GetFenceRequest, callback: grpc.requestCallback<_fencing_v1_GetFenceResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The resource's current fence; 0 when it has never been advanced.
   */
  getFence(argument: _fencing_v1_GetFenceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_GetFenceResponse__Output>): grpc.ClientUnaryCall;
  getFence(argument: _fencing_v1_GetFenceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_GetFenceResponse__Output>): grpc.ClientUnaryCall;
  getFence(argument: _fencing_v1_GetFenceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_GetFenceResponse__Output>): grpc.ClientUnaryCall;
  getFence(argument: _fencing_v1_GetFenceRequest, callback: grpc.requestCallback<_fencing_v1_GetFenceResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Admin only (A4): the resource's fence with the owner it is bound to
   * (A5), and its durable results with the highest tokens, the newest
   * first: writes are accepted in token order (S4), so these are the
   * latest ones, up to ties within one token (ordered by result_id).
   * Reads every result of the resource: an operator's tool, not a hot path.
   */
  ListResults(argument: _fencing_v1_ListResultsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ListResultsResponse__Output>): grpc.ClientUnaryCall;
  ListResults(argument: _fencing_v1_ListResultsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_ListResultsResponse__Output>): grpc.ClientUnaryCall;
  ListResults(argument: _fencing_v1_ListResultsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ListResultsResponse__Output>): grpc.ClientUnaryCall;
  ListResults(argument: _fencing_v1_ListResultsRequest, callback: grpc.requestCallback<_fencing_v1_ListResultsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Admin only (A4): the resource's fence with the owner it is bound to
   * (A5), and its durable results with the highest tokens, the newest
   * first: writes are accepted in token order (S4), so these are the
   * latest ones, up to ties within one token (ordered by result_id).
   * Reads every result of the resource: an operator's tool, not a hot path.
   */
  listResults(argument: _fencing_v1_ListResultsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ListResultsResponse__Output>): grpc.ClientUnaryCall;
  listResults(argument: _fencing_v1_ListResultsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_ListResultsResponse__Output>): grpc.ClientUnaryCall;
  listResults(argument: _fencing_v1_ListResultsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ListResultsResponse__Output>): grpc.ClientUnaryCall;
  listResults(argument: _fencing_v1_ListResultsRequest, callback: grpc.requestCallback<_fencing_v1_ListResultsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Reads a stored result. NOT_FOUND / RESULT_NOT_FOUND when absent.
   */
  Read(argument: _fencing_v1_ReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  Read(argument: _fencing_v1_ReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  Read(argument: _fencing_v1_ReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  Read(argument: _fencing_v1_ReadRequest, callback: grpc.requestCallback<_fencing_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Reads a stored result. NOT_FOUND / RESULT_NOT_FOUND when absent.
   */
  read(argument: _fencing_v1_ReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _fencing_v1_ReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _fencing_v1_ReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _fencing_v1_ReadRequest, callback: grpc.requestCallback<_fencing_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Stores a result if and only if token == fence[resource] (F1) and, with
   * auth on, the caller is the owner the fence is bound to (A5), atomically
   * with the check (F2), idempotently on (resource, result_id) (F3), and
   * durably before answering (F6).
   */
  Write(argument: _fencing_v1_WriteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  Write(argument: _fencing_v1_WriteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  Write(argument: _fencing_v1_WriteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  Write(argument: _fencing_v1_WriteRequest, callback: grpc.requestCallback<_fencing_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Stores a result if and only if token == fence[resource] (F1) and, with
   * auth on, the caller is the owner the fence is bound to (A5), atomically
   * with the check (F2), idempotently on (resource, result_id) (F3), and
   * durably before answering (F6).
   */
  write(argument: _fencing_v1_WriteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  write(argument: _fencing_v1_WriteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_fencing_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  write(argument: _fencing_v1_WriteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_fencing_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  write(argument: _fencing_v1_WriteRequest, callback: grpc.requestCallback<_fencing_v1_WriteResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * This project's extension of the contract (not in the shared
   * PROTOCOL.md): many Writes on one call, for throughput. Each request
   * carries one Write, judged exactly as a unary Write (F1–F6, A5, V1–V3:
   * the same checks, the same commit path, the same reasons) and answered
   * by one response naming its resource and result_id, once durable.
   * Answers come as writes are decided, not in the order sent: match them
   * by (resource, result_id), and send a second write of the same pair only
   * once the first is answered. A refused message ends nothing: the stream
   * goes on. The caller is authenticated and its role checked (A4, A6) once,
   * before any message is read. The stream itself ends with a status only
   * for what no later message could escape: UNAVAILABLE when the sink's
   * storage failed or the sink is stopping (unanswered writes may or may not
   * have landed: retry them, F3), INTERNAL for a bug. A sink stops reading
   * while 256 messages are unanswered or its answers go unread (V4).
   */
  WriteStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_WriteStreamRequest, _fencing_v1_WriteStreamResponse__Output>;
  WriteStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_WriteStreamRequest, _fencing_v1_WriteStreamResponse__Output>;
  /**
   * This project's extension of the contract (not in the shared
   * PROTOCOL.md): many Writes on one call, for throughput. Each request
   * carries one Write, judged exactly as a unary Write (F1–F6, A5, V1–V3:
   * the same checks, the same commit path, the same reasons) and answered
   * by one response naming its resource and result_id, once durable.
   * Answers come as writes are decided, not in the order sent: match them
   * by (resource, result_id), and send a second write of the same pair only
   * once the first is answered. A refused message ends nothing: the stream
   * goes on. The caller is authenticated and its role checked (A4, A6) once,
   * before any message is read. The stream itself ends with a status only
   * for what no later message could escape: UNAVAILABLE when the sink's
   * storage failed or the sink is stopping (unanswered writes may or may not
   * have landed: retry them, F3), INTERNAL for a bug. A sink stops reading
   * while 256 messages are unanswered or its answers go unread (V4).
   */
  writeStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_WriteStreamRequest, _fencing_v1_WriteStreamResponse__Output>;
  writeStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_fencing_v1_WriteStreamRequest, _fencing_v1_WriteStreamResponse__Output>;
  
}

export interface SinkHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Moves the resource's fence to `token` (F4). Coordinator credential only (A1).
   * Succeeds if token > fence, or if the same grant_id already set this token.
   * Otherwise FAILED_PRECONDITION / FENCE_REGRESSION with the current fence.
   * The fence is stored bound to owner_id (A5). Answered only once the new
   * fence is durable (F6).
   */
  AdvanceFence: grpc.handleUnaryCall<_fencing_v1_AdvanceFenceRequest__Output, _fencing_v1_AdvanceFenceResponse>;
  
  /**
   * This project's extension of the contract (not in the shared
   * PROTOCOL.md): many AdvanceFences on one call, so that a coordinator's
   * grant costs a message on an open stream rather than a call of its own.
   * Coordinator credential only (A1, A4), checked once, before any message
   * is read. Each request carries one AdvanceFence, judged exactly as the
   * unary call (F4, A5, F6, V1–V3) and answered by one response naming its
   * resource and grant_id, once durable. Answers come as advances are
   * decided: match them by (resource, grant_id), and send a second advance
   * of the same pair only once the first is answered. A refused message
   * (FENCE_REGRESSION, INVALID_ARGUMENT) ends nothing; the stream ends with
   * a status, as WriteStream's does, only for what no later message could
   * escape (UNAVAILABLE, INTERNAL). A sink without it answers UNIMPLEMENTED:
   * the unary AdvanceFence stays the reference.
   */
  AdvanceFenceStream: grpc.handleBidiStreamingCall<_fencing_v1_AdvanceFenceStreamRequest__Output, _fencing_v1_AdvanceFenceStreamResponse>;
  
  /**
   * The resource's current fence; 0 when it has never been advanced.
   */
  GetFence: grpc.handleUnaryCall<_fencing_v1_GetFenceRequest__Output, _fencing_v1_GetFenceResponse>;
  
  /**
   * Admin only (A4): the resource's fence with the owner it is bound to
   * (A5), and its durable results with the highest tokens, the newest
   * first: writes are accepted in token order (S4), so these are the
   * latest ones, up to ties within one token (ordered by result_id).
   * Reads every result of the resource: an operator's tool, not a hot path.
   */
  ListResults: grpc.handleUnaryCall<_fencing_v1_ListResultsRequest__Output, _fencing_v1_ListResultsResponse>;
  
  /**
   * Reads a stored result. NOT_FOUND / RESULT_NOT_FOUND when absent.
   */
  Read: grpc.handleUnaryCall<_fencing_v1_ReadRequest__Output, _fencing_v1_ReadResponse>;
  
  /**
   * Stores a result if and only if token == fence[resource] (F1) and, with
   * auth on, the caller is the owner the fence is bound to (A5), atomically
   * with the check (F2), idempotently on (resource, result_id) (F3), and
   * durably before answering (F6).
   */
  Write: grpc.handleUnaryCall<_fencing_v1_WriteRequest__Output, _fencing_v1_WriteResponse>;
  
  /**
   * This project's extension of the contract (not in the shared
   * PROTOCOL.md): many Writes on one call, for throughput. Each request
   * carries one Write, judged exactly as a unary Write (F1–F6, A5, V1–V3:
   * the same checks, the same commit path, the same reasons) and answered
   * by one response naming its resource and result_id, once durable.
   * Answers come as writes are decided, not in the order sent: match them
   * by (resource, result_id), and send a second write of the same pair only
   * once the first is answered. A refused message ends nothing: the stream
   * goes on. The caller is authenticated and its role checked (A4, A6) once,
   * before any message is read. The stream itself ends with a status only
   * for what no later message could escape: UNAVAILABLE when the sink's
   * storage failed or the sink is stopping (unanswered writes may or may not
   * have landed: retry them, F3), INTERNAL for a bug. A sink stops reading
   * while 256 messages are unanswered or its answers go unread (V4).
   */
  WriteStream: grpc.handleBidiStreamingCall<_fencing_v1_WriteStreamRequest__Output, _fencing_v1_WriteStreamResponse>;
  
}

export interface SinkDefinition extends grpc.ServiceDefinition {
  AdvanceFence: MethodDefinition<_fencing_v1_AdvanceFenceRequest, _fencing_v1_AdvanceFenceResponse, _fencing_v1_AdvanceFenceRequest__Output, _fencing_v1_AdvanceFenceResponse__Output>
  AdvanceFenceStream: MethodDefinition<_fencing_v1_AdvanceFenceStreamRequest, _fencing_v1_AdvanceFenceStreamResponse, _fencing_v1_AdvanceFenceStreamRequest__Output, _fencing_v1_AdvanceFenceStreamResponse__Output>
  GetFence: MethodDefinition<_fencing_v1_GetFenceRequest, _fencing_v1_GetFenceResponse, _fencing_v1_GetFenceRequest__Output, _fencing_v1_GetFenceResponse__Output>
  ListResults: MethodDefinition<_fencing_v1_ListResultsRequest, _fencing_v1_ListResultsResponse, _fencing_v1_ListResultsRequest__Output, _fencing_v1_ListResultsResponse__Output>
  Read: MethodDefinition<_fencing_v1_ReadRequest, _fencing_v1_ReadResponse, _fencing_v1_ReadRequest__Output, _fencing_v1_ReadResponse__Output>
  Write: MethodDefinition<_fencing_v1_WriteRequest, _fencing_v1_WriteResponse, _fencing_v1_WriteRequest__Output, _fencing_v1_WriteResponse__Output>
  WriteStream: MethodDefinition<_fencing_v1_WriteStreamRequest, _fencing_v1_WriteStreamResponse, _fencing_v1_WriteStreamRequest__Output, _fencing_v1_WriteStreamResponse__Output>
}
