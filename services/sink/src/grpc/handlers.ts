// Thin gRPC handlers: authorize (A4, via unaryFactory), validate every field
// (V1/V2) before anything touches state, call the engine, map the outcome.
// A Write is one function whether it came as a unary call or as one message
// of a WriteStream: the same checks, the one commit path (SinkEngine.write
// and its group commit), the same outcomes and reasons. So is an
// AdvanceFence, unary or a message of an AdvanceFenceStream.
import {
  RequestCheck,
  messageStreamFactory,
  unaryFactory,
  type Authenticator,
  type CallContext,
  type Limits,
  type Logger,
  type OpenStreams,
  type Role,
} from '@fencer/server-kit';
import {
  statusMessage,
  type AdvanceFenceRequest__Output,
  type AdvanceFenceResponse,
  type AdvanceFenceStreamRequest__Output,
  type AdvanceFenceStreamResponse,
  type SinkHandlers,
  type WriteRequest__Output,
  type WriteResponse,
  type WriteStreamRequest__Output,
  type WriteStreamResponse,
} from '@fencer/proto';
import type { SinkApi } from '../core/sink-engine.js';
import { advanceResponseOrThrow, readResponseOrThrow, writeResponseOrThrow } from './status.js';

/**
 * A4. GetFence also admits the coordinator: L6 has a coordinator that lost
 * its data read the sink's fence to resume above it.
 */
export const SINK_ROLES = Object.freeze({
  AdvanceFence: ['coordinator'],
  AdvanceFenceStream: ['coordinator'],
  Write: ['worker'],
  WriteStream: ['worker'],
  Read: ['worker', 'admin'],
  GetFence: ['worker', 'admin', 'coordinator'],
  ListResults: ['admin'],
} as const satisfies Record<keyof SinkHandlers, readonly Role[]>);

/** ListResults answers at most this many results, so one answer stays small. */
export const MAX_LIST_RESULTS = 1000;

/**
 * The fencing.v1.Sink implementation over `engine`; `limits` bound ids and
 * payloads (V2); `streams` collects open WriteStreams for a stop to wind down;
 * `authenticator` is the server's, which a WriteStream asks again at each
 * message (A7).
 */
export function sinkHandlers(
  engine: SinkApi,
  options: { log: Logger; limits: Limits; streams: OpenStreams; authenticator: Authenticator },
): SinkHandlers {
  const { limits, log, streams, authenticator } = options;
  const unary = unaryFactory({ service: 'sink', log });
  const messageStream = messageStreamFactory({ service: 'sink', log, streams, authenticator });
  const write = async (request: WriteRequest__Output, { principal }: CallContext): Promise<WriteResponse> => {
    const check = new RequestCheck(limits);
    const resource = check.id('resource', request.resource);
    const token = check.positive('token', request.token);
    const resultId = check.id('result_id', request.result_id);
    const payload = check.payload('payload', request.payload);
    check.done();
    const outcome = await engine.write({ resource, token, resultId, payload, writer: principal.identity });
    return writeResponseOrThrow(outcome, resource);
  };
  const advanceFence = async (request: AdvanceFenceRequest__Output): Promise<AdvanceFenceResponse> => {
    const check = new RequestCheck(limits);
    const resource = check.id('resource', request.resource);
    const token = check.positive('token', request.token);
    const grantId = check.id('grant_id', request.grant_id);
    // A5: absent (an --insecure deployment, a client of the old contract) binds no identity.
    const ownerId = request.owner_id === '' ? null : check.id('owner_id', request.owner_id);
    check.done();
    const outcome = await engine.advanceFence({ resource, token, grantId, ownerId });
    return advanceResponseOrThrow(outcome, resource);
  };
  return {
    AdvanceFence: unary('AdvanceFence', SINK_ROLES.AdvanceFence, advanceFence),
    AdvanceFenceStream: messageStream<AdvanceFenceStreamRequest__Output, AdvanceFenceStreamResponse>(
      'AdvanceFenceStream',
      SINK_ROLES.AdvanceFenceStream,
      {
        handle: async (message) => {
          const check = new RequestCheck(limits);
          const request = check.present('advance', message.advance);
          check.done();
          const { resource, grant_id } = request!;
          return { resource, grant_id, advanced: await advanceFence(request!) };
        },
        traceContext: (message) => message.trace_context,
        // Named as sent, even when invalid: the coordinator matches answers by these.
        refuse: (message, status) => ({
          resource: message?.advance?.resource ?? '',
          grant_id: message?.advance?.grant_id ?? '',
          refused: statusMessage(status),
        }),
      },
    ),
    Write: unary('Write', SINK_ROLES.Write, write),
    WriteStream: messageStream<WriteStreamRequest__Output, WriteStreamResponse>('WriteStream', SINK_ROLES.WriteStream, {
      handle: async (message, context) => {
        const check = new RequestCheck(limits);
        const request = check.present('write', message.write);
        check.done();
        const { resource, result_id } = request!;
        return { resource, result_id, written: await write(request!, context) };
      },
      traceContext: (message) => message.trace_context,
      // As the worker's CLIENT span names it, so that `fencer trace --name Write` finds unary and streamed alike.
      spanName: () => 'WriteStream Write',
      // Named as sent, even when invalid: the client matches answers by these.
      refuse: (message, status) => ({
        resource: message?.write?.resource ?? '',
        result_id: message?.write?.result_id ?? '',
        refused: statusMessage(status),
      }),
    }),
    Read: unary('Read', SINK_ROLES.Read, async (request) => {
      const check = new RequestCheck(limits);
      const resource = check.id('resource', request.resource);
      const resultId = check.id('result_id', request.result_id);
      check.done();
      return readResponseOrThrow(await engine.read(resource, resultId));
    }),
    GetFence: unary('GetFence', SINK_ROLES.GetFence, async (request) => {
      const check = new RequestCheck(limits);
      const resource = check.id('resource', request.resource);
      check.done();
      return { fence: (await engine.getFence(resource)).toString() };
    }),
    ListResults: unary('ListResults', SINK_ROLES.ListResults, async (request) => {
      const check = new RequestCheck(limits);
      const resource = check.id('resource', request.resource);
      const limit = check.count('limit', request.limit, 1, MAX_LIST_RESULTS);
      check.done();
      const { fence, ownerId, results } = await engine.inspect(resource, limit);
      return {
        fence: fence.toString(),
        fence_owner_id: ownerId ?? '',
        results: results.map((r) => ({
          result_id: r.resultId,
          token: r.token.toString(),
          size_bytes: String(r.sizeBytes),
        })),
      };
    }),
  };
}
