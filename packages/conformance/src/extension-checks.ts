// V3's strict decoding, which only bytes no generated client would send can
// show, and what a deployment offers beyond the wire contract: server
// reflection and this project's extensions (WriteStream, AdvanceFenceStream,
// LeaseStream, ForceRelease, ListResults). An extension is checked when
// offered and skipped on UNIMPLEMENTED: only the wire contract of
// PROTOCOL.md is required.
import * as grpc from '@grpc/grpc-js';
import {
  fencing,
  statusFromMessage,
  type LeaseStreamRequest,
  type LeaseStreamResponse__Output,
  type StatusDetails,
} from '@fencer/proto';
import { reflect, reflectedServices } from '@fencer/supervisor';
import {
  acquire,
  answered,
  Broken,
  coordinatorCaller,
  grant,
  heldAtSink,
  owningSink,
  refused,
  Skip,
  SILENT,
  TTL_MS,
  workers,
  write,
  type Check,
  type CheckContext,
} from './support.js';
import type { Answer, Caller } from './wire.js';

/** Skip when the server answered UNIMPLEMENTED: `what` is not offered. */
function offered<T>(answer: Answer<T>, what: string): Answer<T> {
  if (!answer.ok && answer.refusal.code === grpc.status.UNIMPLEMENTED)
    throw new Skip(`${what} is not offered (UNIMPLEMENTED): an extension of this project, not required`);
  return answer;
}

/**
 * Three ways to break the protobuf encoding (V3), each as a tail after a
 * request that is valid on its own, so that a lenient decoder acts on what
 * it half-read: `text` is a string field of the message, `number` a varint one.
 */
const brokenTails = (text: number, number: number): readonly (readonly [string, Buffer])[] => [
  // The field says 50 bytes follow; 2 do.
  ['a truncated field', Buffer.from([(text << 3) | 2, 50, 0x61, 0x62])],
  // A varint field sent as length-delimited.
  ['a wrong wire type', Buffer.from([(number << 3) | 2, 1, 0x41])],
  // Field number 0, which no message has.
  ['field number 0', Buffer.from([0x00, 0x01])],
];

/** A refusal on a message stream: wire-identical to google.rpc.Status. */
interface StreamRefusal {
  code: number;
  message: string;
  details: { type_url: string; value: Buffer }[];
}

interface WrittenOrRefused {
  resource: string;
  result_id: string;
  written?: { outcome: string; fence: string } | null;
  refused?: StreamRefusal | null;
}

interface AdvancedOrRefused {
  resource: string;
  grant_id: string;
  advanced?: { fence: string } | null;
  refused?: StreamRefusal | null;
}

export const EXTENSION_CHECKS = {
  V3: {
    rule: 'V3',
    title:
      'a valid request with a truncated field, a wrong wire type or field 0 after it is INVALID_ARGUMENT MALFORMED_MESSAGE, never half-read',
    async run(context) {
      const { a, resource, lease, index } = await heldAtSink(context);
      const requests = [
        {
          address: context.wire.deployment.sinks[index]!,
          path: '/fencing.v1.Sink/Write',
          // A Write the sink would apply: WriteRequest's result_id is 3, token 2.
          valid: () =>
            fencing.Sink.service.Write.requestSerialize({
              resource,
              token: lease.token,
              result_id: context.fresh('result'),
              payload: Buffer.from('half-read'),
            }),
          tails: brokenTails(3, 2),
        },
        {
          address: context.wire.deployment.coordinators[0]!,
          path: '/fencing.v1.Coordinator/Acquire',
          // An Acquire the coordinator would grant: AcquireRequest's resource is 2, ttl_ms 5.
          valid: () =>
            fencing.Coordinator.service.Acquire.requestSerialize({
              request_id: context.fresh('request'),
              resource: context.fresh('job'),
              owner_id: a.identity,
              incarnation: '1',
              ttl_ms: TTL_MS,
            }),
          tails: brokenTails(2, 5),
        },
      ];
      for (const { address, path, valid, tails } of requests) {
        for (const [fault, tail] of tails) {
          const answer = await context.wire.raw(address, path, Buffer.concat([valid(), tail]), a);
          refused(answer, grpc.status.INVALID_ARGUMENT, 'MALFORMED_MESSAGE', `${path} at ${address} with ${fault}`);
        }
      }
    },
  },
  reflection: {
    rule: 'reflection',
    title:
      'server reflection (v1 or v1alpha, as grpcurl asks) lists fencing.v1.Sink and fencing.v1.Coordinator and serves their files',
    async run(context) {
      const { coordinators, sinks, tls, timeoutMs } = context.wire.deployment;
      for (const [address, service] of [
        ...sinks.map((sink) => [sink, 'fencing.v1.Sink'] as const),
        ...coordinators.map((coordinator) => [coordinator, 'fencing.v1.Coordinator'] as const),
      ]) {
        const { version, services } = await reflectionOf(context, address);
        if (!services.includes(service))
          throw new Broken(`reflection at ${address} lists [${services.join(', ')}], not ${service}`);
        const files = (await reflect(address, { file_containing_symbol: service }, { version, tls, timeoutMs }))
          .file_descriptor_response?.file_descriptor_proto;
        if (!files || files.length === 0) throw new Broken(`reflection at ${address} serves no file for ${service}`);
      }
    },
  },
  WriteStream: {
    rule: 'WriteStream',
    title: 'WriteStream answers each message as a unary Write would: APPLIED, REPLAYED, a refusal with its ErrorInfo',
    async run(context) {
      const { a, resource, lease, index } = await heldAtSink(context);
      const resultId = context.fresh('result');
      const ahead = String(BigInt(lease.token) + 1n);
      const message = (token: string, id: string) => ({
        write: { resource, token, result_id: id, payload: Buffer.from('streamed') },
      });
      const requests = [
        message(lease.token, resultId),
        message(lease.token, resultId),
        message(ahead, context.fresh('result')),
      ];
      const responses = answered(
        offered(
          await context.wire.sinkStream<object, WrittenOrRefused>('WriteStream', requests, a, index),
          'WriteStream',
        ),
        'WriteStream',
      );
      const seen = responses.map((response) =>
        response.written ? response.written.outcome : response.refused ? reasonOf(response.refused) : '(nothing)',
      );
      const expected = ['APPLIED', 'REPLAYED', 'TOKEN_NOT_ISSUED'];
      if (seen.length !== 3 || seen.some((outcome) => !expected.includes(outcome)) || new Set(seen).size !== 3)
        throw new Broken(`WriteStream answered [${seen.join(', ')}], not ${expected.join(', ')} (in any order)`);
      if (responses.some((response) => response.resource !== resource))
        throw new Broken('a WriteStream response does not name the resource of its request');
    },
  },
  AdvanceFenceStream: {
    rule: 'AdvanceFenceStream',
    title:
      'AdvanceFenceStream answers each message as a unary AdvanceFence would: advanced, the same grant again, FENCE_REGRESSION with the fence',
    async run(context) {
      const coordinator = coordinatorCaller(context);
      const resource = context.fresh('fenced');
      const owner = workers(context)[0].identity;
      const message = (token: string, grantId: string) => ({
        advance: { resource, token, grant_id: grantId, owner_id: owner },
      });
      const stream = async (requests: readonly object[]) =>
        answered(
          offered(
            await context.wire.sinkStream<object, AdvancedOrRefused>('AdvanceFenceStream', requests, coordinator),
            'AdvanceFenceStream',
          ),
          'AdvanceFenceStream',
        );
      const granted = context.fresh('grant');
      await stream([message('5', granted)]);
      // One message per grant: answers may come in any order, matched by grant_id.
      const [again, other, lower] = [granted, context.fresh('grant'), context.fresh('grant')];
      const responses = await stream([message('5', again), message('5', other), message('3', lower)]);
      const seen = Object.fromEntries(
        responses.map((response) => [
          response.grant_id,
          response.advanced
            ? `advanced to ${response.advanced.fence}`
            : response.refused
              ? `${reasonOf(response.refused)} at ${fenceOf(response.refused)}`
              : '(nothing)',
        ]),
      );
      const expected = {
        [again]: 'advanced to 5',
        [other]: 'FENCE_REGRESSION at 5',
        [lower]: 'FENCE_REGRESSION at 5',
      };
      if (!sameAnswers(seen, expected))
        throw new Broken(`AdvanceFenceStream answered ${JSON.stringify(seen)}, not ${JSON.stringify(expected)}`);
      if (responses.length !== 3 || responses.some((response) => response.resource !== resource))
        throw new Broken('an AdvanceFenceStream response does not name the resource of its request');
    },
  },
  LeaseStream: {
    rule: 'LeaseStream',
    title:
      'LeaseStream answers each message as its unary call would: granted, replayed under the same request id (R1, shared with unary Acquire), renewed, released; a message without a call INVALID_FIELD naming call',
    async run(context) {
      const [a] = workers(context);
      const resource = context.fresh('job');
      const requestId = context.fresh('request');
      // As support's acquire() sends it, so that its unary retry below is the same request (R1, not R2).
      const request = { request_id: requestId, resource, owner_id: a.identity, incarnation: '1', ttl_ms: TTL_MS };
      const held = (token: string) => ({ resource, owner_id: a.identity, incarnation: '1', token });
      // A unary call first takes the kit to the leader (H7): a standby refuses each message NOT_LEADER.
      answered(await context.wire.coordinator<object, unknown>('Describe', { resource }, a), `Describe of ${resource}`);
      let token = '(none granted)';
      // Answers come as calls are decided, not in the order sent: a message that needs an earlier
      // one decided is sent once that one is answered. Each call id names one step.
      const next = (response: LeaseStreamResponse__Output): LeaseStreamRequest[] => {
        if (response.call_id === '1' && response.acquired?.lease) {
          token = response.acquired.lease.token;
          // The retry once the grant is recorded (R1); the Renew names its token; one message without a call.
          return [
            { call_id: '2', acquire: request },
            { call_id: '3' },
            { call_id: '4', renew: { ...held(token), ttl_ms: '0' } },
          ];
        }
        // The Release once renewed: sent with the Renew, it might be decided first. The replay
        // need not wait: R1 answers a released grant's retry replayed all the same.
        if (response.call_id === '4' && response.renewed) return [{ call_id: '5', release: held(token) }];
        return [];
      };
      const responses = answered(
        offered(
          await context.wire.coordinatorStream<LeaseStreamRequest, LeaseStreamResponse__Output>(
            'LeaseStream',
            { first: [{ call_id: '1', acquire: request }], next },
            a,
          ),
          'LeaseStream',
        ),
        'LeaseStream',
      );
      const seen = Object.fromEntries(responses.map((response) => [response.call_id, leaseAnswer(response)]));
      const expected = {
        1: `granted token ${token}`,
        2: `replayed token ${token}`,
        3: 'INVALID_ARGUMENT INVALID_FIELD naming call',
        4: `renewed token ${token}`,
        5: 'released',
      };
      if (responses.length !== 5 || !sameAnswers(seen, expected))
        throw new Broken(`LeaseStream answered ${JSON.stringify(seen)}, not ${JSON.stringify(expected)}`);
      // One set of request records behind the stream and the unary calls: the stream's request id,
      // sent again as a unary Acquire, is a retry of the stream's grant (R1), released or not.
      const again = answered(
        await acquire(context, a, resource, requestId),
        "a unary Acquire with the request id of the stream's",
      );
      if (again.replayed !== true || again.lease?.token !== token)
        throw new Broken(
          `a unary Acquire with the request id of the stream's got token ${again.lease?.token} (replayed ${again.replayed}), the stream's ${token}`,
        );
    },
  },
  ForceRelease: {
    rule: 'ForceRelease',
    title:
      "an admin's ForceRelease fences the grant off at the sink (its holder's write is STALE_TOKEN); a retry changes nothing",
    async run(context) {
      const admin = adminCaller(context);
      const [a] = workers(context);
      const resource = context.fresh('job');
      const lease = await grant(context, a, resource);
      const force = async () =>
        answered(
          offered(
            await context.wire.coordinator<object, { forced: boolean; fence: string }>(
              'ForceRelease',
              { resource, token: lease.token },
              admin,
            ),
            'ForceRelease',
          ),
          `the admin's ForceRelease of token ${lease.token}`,
        );
      const first = await force();
      if (!first.forced || BigInt(first.fence) <= BigInt(lease.token))
        throw new Broken(`ForceRelease of token ${lease.token} answered forced ${first.forced}, fence ${first.fence}`);
      const { index } = await owningSink(context, resource);
      refused(
        await write(context, a, resource, lease.token, context.fresh('result'), 'forced off', index),
        grpc.status.FAILED_PRECONDITION,
        'STALE_TOKEN',
        `the holder's write under token ${lease.token} once force-released`,
      );
      const again = await force();
      if (again.forced) throw new Broken('ForceRelease retried answered forced: true again');
    },
  },
  ListResults: {
    rule: 'ListResults',
    title:
      "an admin's ListResults gives a resource's fence, the identity it is bound to, and each result with its token",
    async run(context) {
      const admin = adminCaller(context);
      const { a, resource, lease, index } = await heldAtSink(context);
      const resultId = context.fresh('result');
      answered(await write(context, a, resource, lease.token, resultId, 'listed', index), 'the Write');
      const listed = answered(
        offered(
          await context.wire.sink<
            object,
            { fence: string; fence_owner_id: string; results: { result_id: string; token: string }[] }
          >('ListResults', { resource, limit: 10 }, admin, index),
          'ListResults',
        ),
        'ListResults',
      );
      const result = listed.results.find((entry) => entry.result_id === resultId);
      if (listed.fence !== lease.token || listed.fence_owner_id !== a.identity || result?.token !== lease.token)
        throw new Broken(
          `ListResults gave fence ${listed.fence} bound to "${listed.fence_owner_id}" and ${JSON.stringify(listed.results)}, not fence ${lease.token} bound to ${a.identity} with ${resultId} under it`,
        );
    },
  },
} satisfies Record<string, Check>;

/** The admin's caller (ForceRelease, ListResults: A4); Skip without one in the credentials. */
function adminCaller(context: CheckContext): Caller {
  const caller = context.wire.deployment.callers.admin;
  if (!caller) throw new Skip('needs a credential of role admin in --credentials');
  return caller;
}

/** The reflection version `address` offers (v1, else v1alpha) and the services it lists; Skip with neither. */
async function reflectionOf(
  context: CheckContext,
  address: string,
): Promise<{ version: 'v1' | 'v1alpha'; services: string[] }> {
  const { tls, timeoutMs } = context.wire.deployment;
  for (const version of ['v1', 'v1alpha'] as const) {
    try {
      return { version, services: await reflectedServices(address, { version, tls, timeoutMs }) };
    } catch (error) {
      const { code } = error as grpc.ServiceError;
      if (SILENT.includes(code)) throw new Error(`reflection at ${address} got no answer: is the deployment up?`);
      if (code !== grpc.status.UNIMPLEMENTED)
        throw new Broken(`reflection at ${address} failed: ${(error as Error).message}`);
    }
  }
  throw new Skip(`${address} offers no server reflection (neither v1 nor v1alpha)`);
}

/** Whether two streams' answers, each keyed by what names its message (grant id, call id), are the same, in whatever order they came. */
function sameAnswers(seen: Record<string, string>, expected: Record<string, string>): boolean {
  const sorted = (answers: Record<string, string>) => JSON.stringify(Object.entries(answers).sort());
  return sorted(seen) === sorted(expected);
}

/** A message stream's refusal with its details decoded; undefined when they cannot be. */
function detailsOf(refusal: StreamRefusal): StatusDetails | undefined {
  try {
    return statusFromMessage(refusal);
  } catch {
    return undefined;
  }
}

/** The ErrorInfo reason of a message stream's refusal. */
function reasonOf(refusal: StreamRefusal): string {
  const details = detailsOf(refusal);
  if (!details) return `code ${refusal.code} with undecodable details`;
  return details.errorInfo?.reason ?? `code ${refusal.code} without ErrorInfo`;
}

/** The fence a refusal's ErrorInfo names, if any. */
function fenceOf(refusal: StreamRefusal): string {
  return detailsOf(refusal)?.errorInfo?.metadata.fence ?? '(no fence)';
}

/** One LeaseStream answer in a line: its kind, the token of a lease, or the refusal with the fields it names. */
function leaseAnswer(response: LeaseStreamResponse__Output): string {
  const { acquired, renewed, released, refused } = response;
  if (acquired) return `${acquired.replayed ? 'replayed' : 'granted'} token ${acquired.lease?.token ?? '(no lease)'}`;
  if (renewed) return `renewed token ${renewed.lease?.token ?? '(no lease)'}`;
  if (released) return released.released ? 'released' : 'not released';
  if (refused) {
    const fields = detailsOf(refused)?.fieldViolations?.map((violation) => violation.field) ?? [];
    return `${grpc.status[refused.code] ?? refused.code} ${reasonOf(refused)}${fields.length > 0 ? ` naming ${fields.join(', ')}` : ''}`;
  }
  return '(nothing)';
}
