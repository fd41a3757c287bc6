// The sink's own test helpers: any SinkApi (a real engine or a deliberately
// broken one) served over real gRPC, and a WriteStream driven by hand.
import {
  DEFAULT_LIMITS,
  insecureAuthenticator,
  OpenStreams,
  silentLogger,
  startGrpcServer,
  type RunningServer,
} from '@fencer/server-kit';
import * as grpc from '@grpc/grpc-js';
import {
  SERVICE_NAMES,
  bearer,
  fencing,
  remoteFailure,
  remoteFailureOfStatus,
  type RemoteFailure,
  type SinkClient,
  type WriteStreamRequest,
  type WriteStreamResponse__Output,
} from '@fencer/proto';
import { sinkHandlers } from '../src/grpc/handlers.js';
import type { SinkApi } from '../src/core/sink-engine.js';

/**
 * Serves `api` (an engine over a hand-cranked store, or a deliberately
 * broken one) as fencing.v1.Sink on 127.0.0.1:0, without auth.
 */
export function serveSinkApi(api: SinkApi): Promise<RunningServer> {
  const streams = new OpenStreams();
  const authenticator = insecureAuthenticator;
  return startGrpcServer({
    serviceName: SERVICE_NAMES.sink,
    listen: '127.0.0.1:0',
    definition: fencing.Sink.service,
    handlers: sinkHandlers(api, { log: silentLogger, limits: DEFAULT_LIMITS, streams, authenticator }),
    streams,
    authenticator,
    maxReceiveMessageBytes: 4 * DEFAULT_LIMITS.maxPayloadBytes,
    log: silentLogger,
  });
}

/** How one WriteStream message was answered: APPLIED/REPLAYED or the refusal's reason, with its code and details. */
export interface StreamAnswer {
  readonly resource: string;
  readonly resultId: string;
  readonly outcome: string;
  readonly code: number;
  readonly fence: string | undefined;
  readonly fields: string[];
}

/** An answer as StreamAnswer: a written one is code OK with its fence; a refusal is read as a google.rpc.Status. */
export function streamAnswer(answer: WriteStreamResponse__Output): StreamAnswer {
  const ids = { resource: answer.resource, resultId: answer.result_id };
  if (answer.written)
    return { ...ids, outcome: answer.written.outcome, code: 0, fence: answer.written.fence, fields: [] };
  const failure = remoteFailureOfStatus(answer.refused!);
  return {
    ...ids,
    outcome: failure.reason,
    code: failure.code,
    fence: failure.metadata.fence,
    fields: failure.fieldViolations.map((v) => v.field),
  };
}

/**
 * One WriteStream over a generated grpc-js client, as a test drives it:
 * `ask` sends a message and resolves with its answer (matched by resource
 * and result_id), `answers` holds every answer in arrival order, `ended`
 * resolves with the status: 'OK' or the decoded refusal.
 */
export function openWriteStream(client: SinkClient, token?: string) {
  const call = client.WriteStream(token === undefined ? new grpc.Metadata() : bearer(token));
  const answers: WriteStreamResponse__Output[] = [];
  const waiting = new Map<string, (answer: WriteStreamResponse__Output) => void>();
  const key = (resource: string, resultId: string) => JSON.stringify([resource, resultId]);
  call.on('data', (answer: WriteStreamResponse__Output) => {
    answers.push(answer);
    const id = key(answer.resource, answer.result_id);
    waiting.get(id)?.(answer);
    waiting.delete(id);
  });
  const ended = new Promise<RemoteFailure | 'OK'>((resolve) => {
    call.on('error', () => {}); // the status below says it all
    call.on('status', (status: grpc.StatusObject) =>
      resolve(status.code === grpc.status.OK ? 'OK' : remoteFailure(status)),
    );
  });
  return {
    call,
    answers,
    ended,
    send: (message: WriteStreamRequest) => call.write(message),
    ask: (message: WriteStreamRequest): Promise<StreamAnswer> =>
      new Promise((resolve) => {
        waiting.set(key(message.write?.resource ?? '', message.write?.result_id ?? ''), (answer) =>
          resolve(streamAnswer(answer)),
        );
        call.write(message);
      }),
    /** Half-closes and resolves with the status. */
    end: () => {
      call.end();
      return ended;
    },
  };
}
