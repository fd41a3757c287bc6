// A stand-in for a coordinator replica (H2, H7): a real grpc-js server on a
// real socket serving fencing.v1.Coordinator, which answers each call as its
// test scripts: NOT_LEADER naming a leader or none (encoded as a replica
// encodes it: UNAVAILABLE, ErrorInfo reason NOT_LEADER with `leader` in its
// metadata, and the `fencing-reason` trailer), a bare status, a response, or
// no answer at all. Clients' tests use it to play standbys, a leader that
// loses its leadership, or one that stops answering, beside a real
// `fencer coordinator` as the leader.
import * as grpc from '@grpc/grpc-js';
import { ERROR_DOMAIN, REASON_KEY, STATUS_DETAILS_KEY, encodeStatusDetails, fencing } from '@fencer/proto';

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
  script: (call: ScriptedCall) => ScriptedAnswer | Promise<ScriptedAnswer>;
  close(): Promise<void>;
}

/** Starts a stand-in replica on 127.0.0.1 (a port of its own) answering as `script` says. */
export async function startScriptedCoordinator(script: ScriptedCoordinator['script']): Promise<ScriptedCoordinator> {
  const server = new grpc.Server();
  const stub: ScriptedCoordinator = {
    address: '',
    calls: [],
    script,
    close: () => Promise.resolve(server.forceShutdown()),
  };
  const handlers = Object.fromEntries(
    Object.keys(fencing.Coordinator.service).map((method) => {
      const handler: grpc.handleUnaryCall<Record<string, unknown>, object> = (call, callback) => {
        const received = { method, request: call.request };
        stub.calls.push(received);
        void Promise.resolve(stub.script(received)).then((answer) => {
          if (answer === 'hang') return;
          if ('response' in answer) callback(null, answer.response);
          else if ('status' in answer) callback({ code: answer.status, details: 'scripted failure' });
          else callback(notLeader(answer.notLeader));
        });
      };
      return [method, handler];
    }),
  );
  server.addService(fencing.Coordinator.service, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return Object.assign(stub, { address: `127.0.0.1:${port}` });
}

/** UNAVAILABLE NOT_LEADER as PROTOCOL.md's error model sends it. */
function notLeader(leader: string | null): Partial<grpc.StatusObject> {
  const message = leader === null ? 'not the leader; no leader is known' : `not the leader; the leader is ${leader}`;
  const metadata = new grpc.Metadata();
  metadata.set(REASON_KEY, 'NOT_LEADER');
  metadata.set(
    STATUS_DETAILS_KEY,
    encodeStatusDetails({
      code: grpc.status.UNAVAILABLE,
      message,
      errorInfo: { reason: 'NOT_LEADER', domain: ERROR_DOMAIN, metadata: leader === null ? {} : { leader } },
      fieldViolations: [],
    }),
  );
  return { code: grpc.status.UNAVAILABLE, details: message, metadata };
}
