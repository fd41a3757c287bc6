// A stand-in for a coordinator replica (H2, H7): a real grpc-js server on a
// real socket serving fencing.v1.Coordinator, which answers each call as its
// test scripts: NOT_LEADER naming a leader or none (encoded as a replica
// encodes it: UNAVAILABLE, ErrorInfo reason NOT_LEADER with `leader` in its
// metadata, and the `fencing-reason` trailer), a bare status, a response, or
// no answer at all. Clients' tests use it to play standbys, a leader that
// loses its leadership, or one that stops answering, beside a real
// `fencer coordinator` as the leader. An Acquire, Renew or Release that
// comes as a LeaseStream message is scripted as the unary call would be and
// answered on the stream (a bare status ends the stream, as a proxy's or a
// stopping server's would); `leaseStream: false` plays a coordinator of the
// shared contract alone, which answers the stream UNIMPLEMENTED.
import * as grpc from '@grpc/grpc-js';
import {
  ERROR_DOMAIN,
  REASON_KEY,
  STATUS_DETAILS_KEY,
  encodeStatusDetails,
  fencing,
  statusMessage,
  type StatusDetails,
} from '@fencer/proto';

/** One call as the stand-in received it: the method's name and the decoded request. */
export interface ScriptedCall {
  readonly method: string;
  readonly request: Record<string, unknown>;
}

/** How the stand-in answers a call. */
export type ScriptedAnswer =
  /** UNAVAILABLE NOT_LEADER, naming the leader's HOST:PORT, or none (null) as during an election. */
  | { readonly notLeader: string | null }
  /** A status without protocol details, as a proxy or a stopping server sends. */
  | { readonly status: grpc.status }
  /** This response. */
  | { readonly response: object }
  /** No answer: the caller's deadline passes. */
  | 'hang';

/** A running stand-in replica. Change `script` at any time; `calls` lists every call received, in order. */
export interface ScriptedCoordinator {
  readonly address: string;
  readonly calls: ScriptedCall[];
  /** How many LeaseStream calls were opened to it. */
  readonly leaseStreamsOpened: number;
  script: (call: ScriptedCall) => ScriptedAnswer | Promise<ScriptedAnswer>;
  close(): Promise<void>;
}

/** Starts a stand-in replica on 127.0.0.1 (a port of its own) answering as `script` says. */
export async function startScriptedCoordinator(
  script: ScriptedCoordinator['script'],
  options: { leaseStream?: boolean } = {},
): Promise<ScriptedCoordinator> {
  const server = new grpc.Server();
  const stub: ScriptedCoordinator = {
    address: '',
    calls: [],
    leaseStreamsOpened: 0,
    script,
    close: () => Promise.resolve(server.forceShutdown()),
  };
  const answerOf = (method: string, request: Record<string, unknown>) => {
    const received = { method, request };
    stub.calls.push(received);
    return Promise.resolve(stub.script(received));
  };
  const unaryMethods = Object.keys(fencing.Coordinator.service).filter((method) => method !== 'LeaseStream');
  const handlers: grpc.UntypedServiceImplementation = Object.fromEntries(
    unaryMethods.map((method) => {
      const handler: grpc.handleUnaryCall<Record<string, unknown>, object> = (call, callback) => {
        void answerOf(method, call.request).then((answer) => {
          if (answer === 'hang') return;
          if ('response' in answer) callback(null, answer.response);
          else if ('status' in answer) callback({ code: answer.status, details: 'scripted failure' });
          else callback(notLeader(answer.notLeader));
        });
      };
      return [method, handler];
    }),
  );
  const serveStream = scriptedLeaseStream(answerOf);
  if (options.leaseStream !== false)
    handlers.LeaseStream = (call: grpc.ServerDuplexStream<Record<string, unknown>, object>) => {
      Object.assign(stub, { leaseStreamsOpened: stub.leaseStreamsOpened + 1 });
      serveStream(call);
    };
  server.addService(fencing.Coordinator.service, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return Object.assign(stub, { address: `127.0.0.1:${port}` });
}

/** Each LeaseStream message scripted as its unary call, its answer (or NOT_LEADER) a message of the stream. */
function scriptedLeaseStream(
  answerOf: (method: string, request: Record<string, unknown>) => Promise<ScriptedAnswer>,
): grpc.handleBidiStreamingCall<Record<string, unknown>, object> {
  const kinds = [
    ['acquire', 'Acquire', 'acquired'],
    ['renew', 'Renew', 'renewed'],
    ['release', 'Release', 'released'],
  ] as const;
  return (call) => {
    call.on('data', (message: Record<string, unknown>) => {
      const [field, method, answerField] = kinds.find(([name]) => message[name]) ?? kinds[0];
      const { call_id } = message;
      void answerOf(method, message[field] as Record<string, unknown>).then((answer) => {
        if (answer === 'hang') return;
        if ('response' in answer) call.write({ call_id, [answerField]: answer.response });
        else if ('status' in answer) call.emit('error', { code: answer.status, details: 'scripted failure' });
        else call.write({ call_id, refused: statusMessage(notLeaderStatus(answer.notLeader)) });
      });
    });
    call.on('end', () => call.end());
  };
}

/** NOT_LEADER's google.rpc.Status, as PROTOCOL.md's error model sends it. */
function notLeaderStatus(leader: string | null): StatusDetails {
  const message = leader === null ? 'not the leader; no leader is known' : `not the leader; the leader is ${leader}`;
  return {
    code: grpc.status.UNAVAILABLE,
    message,
    errorInfo: { reason: 'NOT_LEADER', domain: ERROR_DOMAIN, metadata: leader === null ? {} : { leader } },
    fieldViolations: [],
  };
}

/** UNAVAILABLE NOT_LEADER as a unary call ends with it. */
function notLeader(leader: string | null): Partial<grpc.StatusObject> {
  const status = notLeaderStatus(leader);
  const metadata = new grpc.Metadata();
  metadata.set(REASON_KEY, 'NOT_LEADER');
  metadata.set(STATUS_DETAILS_KEY, encodeStatusDetails(status));
  return { code: grpc.status.UNAVAILABLE, details: status.message, metadata };
}
