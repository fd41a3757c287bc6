// The one outcome → status mapping, seen from a real grpc-js client against a
// real server on 127.0.0.1:0: every reason travels with PROTOCOL.md's code,
// an ErrorInfo (domain fencing.v1, the reason, its metadata), a BadRequest
// for invalid input, and the `fencing-reason` trailer; auth (the call gate
// of startGrpcServer) and the role check run before the handler (A2/A4); anything that is not a Failure is a bare INTERNAL whose
// message and stack reach only the log.
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gate, turnCounter } from '@fencer/testkit';
import {
  bearer,
  decodeStatusDetails,
  fencing,
  REASON_KEY,
  SERVICE_NAMES,
  STATUS_DETAILS_KEY,
  unaryCall,
  type SinkClient,
  type StatusDetails,
} from '@fencer/proto';
import { credentialsAuthenticator } from './auth.js';
import type { Reason } from '@fencer/common';
import { Failure } from './failure.js';
import { registry } from './metrics.js';
import { startGrpcServer, type RunningServer } from './server.js';
import { unaryFactory } from './unary.js';
import { ANSWERS_PER_TURN } from './answer-pacer.js';
import { RequestCheck } from './validation.js';

// PROTOCOL.md, error model (plus the auth and INTERNAL reasons the kit adds).
const ERROR_MODEL: [Reason, keyof typeof grpc.status][] = [
  ['INVALID_FIELD', 'INVALID_ARGUMENT'],
  ['OWNER_MISMATCH', 'PERMISSION_DENIED'],
  ['LEASE_HELD', 'ABORTED'],
  ['LEASE_EXPIRED', 'FAILED_PRECONDITION'],
  ['NOT_LEASE_HOLDER', 'FAILED_PRECONDITION'],
  ['REQUEST_ID_REUSED', 'INVALID_ARGUMENT'],
  ['SINK_UNAVAILABLE', 'UNAVAILABLE'],
  ['STALE_TOKEN', 'FAILED_PRECONDITION'],
  ['TOKEN_NOT_ISSUED', 'FAILED_PRECONDITION'],
  ['RESULT_CONFLICT', 'ALREADY_EXISTS'],
  ['RESULT_NOT_FOUND', 'NOT_FOUND'],
  ['FENCE_REGRESSION', 'FAILED_PRECONDITION'],
  ['FENCE_CONFLICT', 'ABORTED'],
  ['RATE_LIMITED', 'RESOURCE_EXHAUSTED'],
  ['TOO_MANY_STREAMS', 'RESOURCE_EXHAUSTED'],
  ['RECORDS_FULL', 'RESOURCE_EXHAUSTED'],
  ['MESSAGE_TOO_LARGE', 'RESOURCE_EXHAUSTED'],
  ['UNAUTHENTICATED', 'UNAUTHENTICATED'],
  ['PERMISSION_DENIED', 'PERMISSION_DENIED'],
  ['INTERNAL', 'INTERNAL'],
  ['UNAVAILABLE', 'UNAVAILABLE'],
];

const WORKER = 'worker-token-0123456789';
const COORDINATOR = 'coordinator-token-0123';
const logLines: string[] = [];
const log = pino(
  { level: 'info' },
  new Writable({ write: (chunk, _encoding, done) => (logLines.push(String(chunk)), done()) }),
);
const handled: string[] = [];
const PACED_CALLS = 4 * ANSWERS_PER_TURN;
let pacedArrived = 0;
const allPacedArrived = gate();

let server: RunningServer;
let client: SinkClient;

beforeAll(async () => {
  const unary = unaryFactory({ service: 'unary-test', log });
  const handlers = {
    // Refuses with the reason named by `resource`.
    Write: unary<{ resource: string }, never>('Write', ['worker'], async ({ resource }) => {
      handled.push('Write');
      throw new Failure(resource as Reason, `refused: ${resource}`, { fence: '7' });
    }),
    // V1: every bad field named.
    Read: unary<{ resource: string; result_id: string }, never>('Read', ['worker'], async (request) => {
      const check = new RequestCheck();
      check.id('resource', request.resource);
      check.id('result_id', request.result_id);
      check.done();
      throw new Error('unreachable in these tests');
    }),
    // A bug: a plain Error whose message holds internals.
    GetFence: unary<{ resource: string }, never>('GetFence', ['worker'], async () => {
      throw new Error('ENOENT: /var/lib/secret-path/LOCK');
    }),
    // Every call waits for the last of PACED_CALLS, so all their answers are ready in one turn.
    ListResults: unary<{ resource: string }, { results: [] }>('ListResults', ['worker'], async () => {
      if (++pacedArrived === PACED_CALLS) allPacedArrived.open();
      await allPacedArrived.opened;
      return { results: [] };
    }),
    AdvanceFence: unary<{ resource: string }, { fence: string }>(
      'AdvanceFence',
      ['coordinator'],
      async (_request, { principal }) => {
        handled.push(`AdvanceFence by ${principal.identity}`);
        return { fence: '1' };
      },
    ),
  };
  server = await startGrpcServer({
    serviceName: SERVICE_NAMES.sink,
    listen: '127.0.0.1:0',
    definition: fencing.Sink.service,
    handlers,
    authenticator: credentialsAuthenticator([
      { token: WORKER, identity: 'w1', role: 'worker' },
      { token: COORDINATOR, identity: 'c', role: 'coordinator' },
    ]),
    maxReceiveMessageBytes: 1024 * 1024,
    log,
  });
  client = new fencing.Sink(server.address, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client.close();
  await server.stop(0);
});

/** What a client sees of a failed call, read off the wire by hand. */
async function wireFailure(
  call: Promise<unknown>,
): Promise<{ code: number; message: string; trailer: unknown; details: StatusDetails }> {
  try {
    await call;
  } catch (error) {
    const { code, details: message, metadata } = error as grpc.ServiceError;
    const bin = metadata.get(STATUS_DETAILS_KEY)[0];
    if (!(bin instanceof Buffer)) throw new Error(`no ${STATUS_DETAILS_KEY} on a failed call`);
    return { code, message, trailer: metadata.get(REASON_KEY)[0], details: decodeStatusDetails(bin) };
  }
  throw new Error('expected the call to fail');
}

const write = (resource: string, token = WORKER) =>
  unaryCall(
    client,
    client.Write,
    { resource, token: '1', result_id: 'x', payload: Buffer.alloc(0) },
    { metadata: bearer(token), timeoutMs: 5_000 },
  );

describe('Failure → status', () => {
  it.each(ERROR_MODEL)('%s travels as %s with ErrorInfo and the fencing-reason trailer', async (reason, codeName) => {
    const seen = await wireFailure(write(reason));
    expect(seen).toEqual({
      code: grpc.status[codeName],
      message: `refused: ${reason}`,
      trailer: reason,
      details: {
        code: grpc.status[codeName],
        message: `refused: ${reason}`,
        errorInfo: { reason, domain: 'fencing.v1', metadata: { fence: '7' } },
      },
    });
  });

  it('V1: invalid input is INVALID_ARGUMENT with a BadRequest naming every bad field', async () => {
    const seen = await wireFailure(
      unaryCall(client, client.Read, { resource: '', result_id: 'a\u0000b' }, { metadata: bearer(WORKER) }),
    );
    expect(seen.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(seen.trailer).toBe('INVALID_FIELD');
    expect(seen.details.errorInfo).toEqual({
      reason: 'INVALID_FIELD',
      domain: 'fencing.v1',
      metadata: { field: 'resource,result_id' },
    });
    expect(seen.details.fieldViolations?.map((v) => v.field)).toEqual(['resource', 'result_id']);
  });

  it('anything else is INTERNAL with a bare message: the internals reach the log only', async () => {
    const seen = await wireFailure(unaryCall(client, client.GetFence, { resource: 'r' }, { metadata: bearer(WORKER) }));
    expect(seen.code).toBe(grpc.status.INTERNAL);
    expect(seen.trailer).toBe('INTERNAL');
    expect(seen.details.errorInfo).toEqual({ reason: 'INTERNAL', domain: 'fencing.v1', metadata: {} });
    expect(JSON.stringify(seen)).not.toContain('secret-path');
    const logged = logLines.find((line) => line.includes('secret-path'));
    expect(logged).toBeDefined();
    expect(JSON.parse(logged!)).toMatchObject({
      level: 50,
      method: 'GetFence',
      err: { stack: expect.stringContaining('unary.test.ts') },
    });
  });

  it('counts calls by gRPC code name', async () => {
    await wireFailure(write('STALE_TOKEN'));
    const counter = (await registry.getSingleMetric('fencer_rpc_calls_total')!.get()).values;
    expect(counter).toContainEqual(
      expect.objectContaining({ labels: { service: 'unary-test', method: 'Write', code: 'FAILED_PRECONDITION' } }),
    );
  });
});

describe('auth before the handler (A2, A4)', () => {
  it.each([
    ['no credentials', new grpc.Metadata()],
    ['an unknown token', bearer('not-a-known-token-000')],
  ])('%s: UNAUTHENTICATED, and the handler never runs', async (_what, metadata) => {
    const before = handled.length;
    const seen = await wireFailure(
      unaryCall(client, client.AdvanceFence, { resource: 'r', token: '1', grant_id: 'g' }, { metadata }),
    );
    expect([seen.code, seen.trailer, seen.details.errorInfo?.reason]).toEqual([
      grpc.status.UNAUTHENTICATED,
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
    ]);
    expect(handled.length).toBe(before);
  });

  it('a known identity with a role the method does not admit: PERMISSION_DENIED, and the handler never runs', async () => {
    const before = handled.length;
    const seen = await wireFailure(
      unaryCall(
        client,
        client.AdvanceFence,
        { resource: 'r', token: '1', grant_id: 'g' },
        { metadata: bearer(WORKER) },
      ),
    );
    expect([seen.code, seen.trailer]).toEqual([grpc.status.PERMISSION_DENIED, 'PERMISSION_DENIED']);
    expect(handled.length).toBe(before);
  });

  it('an admitted role reaches the handler, which learns who called', async () => {
    await unaryCall(
      client,
      client.AdvanceFence,
      { resource: 'r', token: '1', grant_id: 'g' },
      { metadata: bearer(COORDINATOR) },
    );
    expect(handled.at(-1)).toBe('AdvanceFence by c');
  });
});

describe('answers ready together (AnswerPacer)', () => {
  it(`leave at most ${ANSWERS_PER_TURN} per turn, so the client gets them over several turns`, async () => {
    const turns = turnCounter();
    const answeredIn: number[] = [];
    await Promise.all(
      Array.from({ length: PACED_CALLS }, (_, i) =>
        unaryCall(
          client,
          client.ListResults,
          { resource: `r${i}`, limit: 1 },
          { metadata: bearer(WORKER), timeoutMs: 10_000 },
        ).then(() => answeredIn.push(turns.turn)),
      ),
    );
    turns.stop();
    expect(answeredIn).toHaveLength(PACED_CALLS);
    // Answered in the one turn they were ready in, all would arrive in one or two.
    expect(new Set(answeredIn).size).toBeGreaterThanOrEqual(PACED_CALLS / ANSWERS_PER_TURN);
  });
});
