// The rules a client can observe, each checked over the wire alone and
// named by its id in docs/PROTOCOL.md. A check holds, fails with one line of
// evidence, or is skipped when the deployment does not offer what it needs
// (a second sink for P4). It fails only on evidence that the implementation
// breaks the rule; a call that does not answer at all is evidence of
// nothing and is reported as an error of the run, not of the rule.
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { ERROR_DOMAIN } from '@fencer/proto';
import {
  acquire,
  advanceFence,
  answered,
  Broken,
  coordinatorCaller,
  describeRefusal,
  expiredLease,
  fenceAtSinks,
  grant,
  heldAtSink,
  healthOf,
  MAX_TOKEN,
  owningSink,
  refused,
  release,
  secured,
  SHORT_TTL_MS,
  Skip,
  TTL_MS,
  workers,
  write,
  type Check,
  type CheckContext,
  type CheckResult,
} from './support.js';

import { EXTENSION_CHECKS } from './extension-checks.js';
import { REPLICA_CHECKS } from './replica-checks.js';
import { RESTART_CHECKS } from './restart-checks.js';
import type { Wire } from './wire.js';

export type { CheckResult } from './support.js';
/** Every check, in the order of docs/PROTOCOL.md. */
export const CHECKS: readonly Check[] = [
  {
    rule: 'L1',
    title: `a lease ends after its TTL (${SHORT_TTL_MS} ms) on the coordinator's clock; another owner then gets a larger token`,
    async run(context) {
      const [a, b] = workers(context);
      const resource = context.fresh('job');
      const old = await expiredLease(context, a, resource);
      const next = await grant(context, b, resource);
      if (BigInt(next.token) <= BigInt(old.token))
        throw new Broken(`token ${next.token} granted after the expired token ${old.token} (L6)`);
    },
  },
  {
    rule: 'L3',
    title: "an Acquire is answered only once the sink's fence is the granted token",
    async run(context) {
      const resource = context.fresh('job');
      const lease = await grant(context, workers(context)[0], resource);
      const { fence } = await fenceAtSinks(context, resource);
      if (fence !== BigInt(lease.token)) {
        throw new Broken(
          `granted token ${lease.token}, but the fence at the sinks given is ${fence} (were all the sinks given?)`,
        );
      }
    },
  },
  {
    rule: 'L2',
    title: 'a valid lease is refused to another owner: ABORTED LEASE_HELD, naming the holder and the time left',
    async run(context) {
      const [a, b] = workers(context);
      const resource = context.fresh('job');
      await grant(context, a, resource);
      const refusal = refused(
        await acquire(context, b, resource),
        grpc.status.ABORTED,
        'LEASE_HELD',
        `${b.identity}'s Acquire of a held lease`,
      );
      const metadata = refusal.errorInfo?.metadata ?? {};
      if (metadata.holder_owner_id !== a.identity || !/^\d+$/.test(metadata.remaining_ms ?? '')) {
        throw new Broken(
          `LEASE_HELD without holder_owner_id ${a.identity} and remaining_ms: ${JSON.stringify(metadata)}`,
        );
      }
    },
  },
  {
    rule: 'L4',
    title:
      "a Renew by someone other than the holder is FAILED_PRECONDITION NOT_LEASE_HOLDER; the holder's Renew after expiry is LEASE_EXPIRED",
    async run(context) {
      const [a, b] = workers(context);
      const lease = await grant(context, a, context.fresh('job'));
      const answer = await context.wire.coordinator<object, unknown>(
        'Renew',
        { resource: lease.resource, owner_id: b.identity, incarnation: '1', token: lease.token, ttl_ms: '0' },
        b,
      );
      refused(
        answer,
        grpc.status.FAILED_PRECONDITION,
        'NOT_LEASE_HOLDER',
        `${b.identity}'s Renew of ${a.identity}'s lease`,
      );
      const expired = await expiredLease(context, a, context.fresh('job'));
      refused(
        await context.wire.coordinator<object, unknown>(
          'Renew',
          { resource: expired.resource, owner_id: a.identity, incarnation: '1', token: expired.token, ttl_ms: '0' },
          a,
        ),
        grpc.status.FAILED_PRECONDITION,
        'LEASE_EXPIRED',
        `the holder's Renew of its expired lease, nobody having taken over`,
      );
    },
  },
  {
    rule: 'L5',
    title: 'a Release by the holder frees the lease at once, and tokens only grow (L6)',
    async run(context) {
      const [a, b] = workers(context);
      const resource = context.fresh('job');
      const first = await grant(context, a, resource);
      const released = answered(await release(context, a, first), "the holder's Release");
      if (!released.released) throw new Broken("the holder's Release was answered released: false");
      const second = await grant(context, b, resource);
      if (BigInt(second.token) <= BigInt(first.token)) {
        throw new Broken(`token ${second.token} granted after token ${first.token} (L6)`);
      }
    },
  },
  RESTART_CHECKS.L7,
  {
    rule: 'R1',
    title: 'an Acquire retried with its request id gets the same token, marked replayed',
    async run(context) {
      const [a] = workers(context);
      const resource = context.fresh('job');
      const requestId = context.fresh('request');
      const first = answered(await acquire(context, a, resource, requestId), 'the first Acquire');
      const again = answered(await acquire(context, a, resource, requestId), 'its retry');
      if (again.lease?.token !== first.lease?.token || again.replayed !== true) {
        throw new Broken(
          `the retry got token ${again.lease?.token} (replayed ${again.replayed}), the first ${first.lease?.token}`,
        );
      }
    },
  },
  {
    rule: 'R2',
    title: 'a request id reused for another acquisition is INVALID_ARGUMENT REQUEST_ID_REUSED',
    async run(context) {
      const [a] = workers(context);
      const requestId = context.fresh('request');
      answered(await acquire(context, a, context.fresh('job'), requestId), 'the first Acquire');
      refused(
        await acquire(context, a, context.fresh('job'), requestId),
        grpc.status.INVALID_ARGUMENT,
        'REQUEST_ID_REUSED',
        'the same request id for another resource',
      );
    },
  },
  RESTART_CHECKS.R3,
  {
    rule: 'F1',
    title: 'a write below the fence is STALE_TOKEN, above it TOKEN_NOT_ISSUED, both FAILED_PRECONDITION with the fence',
    async run(context) {
      const [a, b] = workers(context);
      const resource = context.fresh('job');
      const old = await grant(context, a, resource);
      answered(await release(context, a, old), 'the Release');
      const current = await grant(context, b, resource);
      const { index } = await owningSink(context, resource);
      const stale = refused(
        await write(context, a, resource, old.token, context.fresh('result'), 'late', index),
        grpc.status.FAILED_PRECONDITION,
        'STALE_TOKEN',
        `a write under token ${old.token} once the fence is ${current.token}`,
      );
      if (stale.errorInfo?.metadata.fence !== current.token) {
        throw new Broken(`STALE_TOKEN names fence ${stale.errorInfo?.metadata.fence}, not ${current.token}`);
      }
      const ahead = String(BigInt(current.token) + 1n);
      refused(
        await write(context, b, resource, ahead, context.fresh('result'), 'early', index),
        grpc.status.FAILED_PRECONDITION,
        'TOKEN_NOT_ISSUED',
        `a write under token ${ahead}, above the fence`,
      );
    },
  },
  {
    rule: 'F3',
    title: 'a result id holds one payload: the same again is REPLAYED, another is ALREADY_EXISTS RESULT_CONFLICT',
    async run(context) {
      const { a, resource, lease, index } = await heldAtSink(context);
      const resultId = context.fresh('result');
      const first = answered(await write(context, a, resource, lease.token, resultId, 'one', index), 'the first Write');
      const again = answered(
        await write(context, a, resource, lease.token, resultId, 'one', index),
        'the same Write again',
      );
      if (first.outcome !== 'APPLIED' || again.outcome !== 'REPLAYED') {
        throw new Broken(
          `the first Write was ${first.outcome} and its repeat ${again.outcome}, not APPLIED then REPLAYED`,
        );
      }
      refused(
        await write(context, a, resource, lease.token, resultId, 'two', index),
        grpc.status.ALREADY_EXISTS,
        'RESULT_CONFLICT',
        'another payload under the result id',
      );
      const read = answered(
        await context.wire.sink<object, { payload: Buffer; token: string }>(
          'Read',
          { resource, result_id: resultId },
          a,
          index,
        ),
        'the Read',
      );
      if (read.payload.toString() !== 'one' || read.token !== lease.token) {
        throw new Broken(
          `Read gave ${JSON.stringify(read.payload.toString())} under token ${read.token}, not "one" under ${lease.token}`,
        );
      }
    },
  },
  {
    rule: 'F4',
    title: 'AdvanceFence moves the fence only up; the same grant again is accepted; anything else is FENCE_REGRESSION',
    async run(context) {
      const coordinator = coordinatorCaller(context);
      const resource = context.fresh('fenced');
      const grantId = context.fresh('grant');
      answered(await advanceFence(context, coordinator, resource, '5', grantId), 'AdvanceFence to 5');
      answered(await advanceFence(context, coordinator, resource, '5', grantId), 'the same AdvanceFence again');
      for (const [token, grantOf] of [
        ['5', context.fresh('grant')],
        ['3', context.fresh('grant')],
      ] as const) {
        refused(
          await advanceFence(context, coordinator, resource, token, grantOf),
          grpc.status.FAILED_PRECONDITION,
          'FENCE_REGRESSION',
          `AdvanceFence to ${token} of another grant, once the fence is 5`,
        );
      }
    },
  },
  {
    rule: 'F5',
    title: "lease expiry alone does not fence: with no successor the expired holder's write is still APPLIED",
    async run(context) {
      const [a] = workers(context);
      const resource = context.fresh('job');
      const expired = await expiredLease(context, a, resource);
      const { index } = await owningSink(context, resource);
      const answer = await write(context, a, resource, expired.token, context.fresh('result'), 'late', index);
      if (!answer.ok && (answer.refusal.errorInfo?.reason ?? answer.refusal.trailer) === 'STALE_TOKEN')
        throw new Skip('the deployment fences on expiry (L8, fence-on-expiry): F5 does not apply');
      const outcome = answered(answer, "the expired holder's Write");
      if (outcome.outcome !== 'APPLIED') throw new Broken(`the expired holder's Write was ${outcome.outcome}`);
    },
  },
  RESTART_CHECKS.F6,
  {
    rule: 'A2',
    title: 'a call without credentials, or with unknown ones, is UNAUTHENTICATED',
    async run(context) {
      secured(context);
      for (const [caller, what] of [
        [{ identity: workers(context)[0].identity, token: undefined }, 'no credentials'],
        [{ identity: workers(context)[0].identity, token: `unknown-${randomUUID()}` }, 'an unknown bearer token'],
      ] as const) {
        const answer = await acquire(context, caller, context.fresh('job'));
        if (answer.ok || answer.refusal.code !== grpc.status.UNAUTHENTICATED)
          throw new Broken(
            `an Acquire with ${what} was ${answer.ok ? 'answered' : describeRefusal(answer.refusal)}, not UNAUTHENTICATED`,
          );
      }
    },
  },
  {
    rule: 'A3',
    title: "a worker's owner_id must be its own identity: PERMISSION_DENIED OWNER_MISMATCH",
    async run(context) {
      secured(context);
      const [a, b] = workers(context);
      refused(
        await context.wire.coordinator<object, unknown>(
          'Acquire',
          {
            request_id: context.fresh('request'),
            resource: context.fresh('job'),
            owner_id: b.identity,
            incarnation: '1',
            ttl_ms: TTL_MS,
          },
          a,
        ),
        grpc.status.PERMISSION_DENIED,
        'OWNER_MISMATCH',
        `${a.identity}'s Acquire as ${b.identity}`,
      );
    },
  },
  {
    rule: 'A4',
    title: "only the coordinator may call AdvanceFence: a worker's is PERMISSION_DENIED",
    async run(context) {
      secured(context);
      const [a] = workers(context);
      const answer = await advanceFence(context, a, context.fresh('fenced'), '1', context.fresh('grant'));
      if (answer.ok || answer.refusal.code !== grpc.status.PERMISSION_DENIED)
        throw new Broken(
          `a worker's AdvanceFence was ${answer.ok ? 'answered' : describeRefusal(answer.refusal)}, not PERMISSION_DENIED`,
        );
    },
  },
  {
    rule: 'A5',
    title:
      "a token is not a capability: another worker's Write under the holder's token is PERMISSION_DENIED OWNER_MISMATCH",
    async run(context) {
      secured(context);
      const [a, b] = workers(context);
      const resource = context.fresh('job');
      const lease = await grant(context, a, resource);
      const { index } = await owningSink(context, resource);
      refused(
        await write(context, b, resource, lease.token, context.fresh('result'), 'usurped', index),
        grpc.status.PERMISSION_DENIED,
        'OWNER_MISMATCH',
        `${b.identity}'s Write under ${a.identity}'s token ${lease.token}`,
      );
    },
  },
  {
    rule: 'errors',
    title:
      'a refusal carries google.rpc.ErrorInfo (domain fencing.v1) and the same reason in the fencing-reason trailer',
    async run(context) {
      const [a] = workers(context);
      const answer = await context.wire.sink<object, unknown>(
        'Read',
        { resource: context.fresh('job'), result_id: 'none' },
        a,
      );
      const refusal = refused(answer, grpc.status.NOT_FOUND, 'RESULT_NOT_FOUND', 'a Read of nothing');
      if (refusal.errorInfo?.domain !== ERROR_DOMAIN || refusal.errorInfo.reason !== refusal.trailer) {
        throw new Broken(
          `ErrorInfo ${JSON.stringify(refusal.errorInfo)} and trailer ${JSON.stringify(refusal.trailer)} do not both say RESULT_NOT_FOUND in ${ERROR_DOMAIN}`,
        );
      }
    },
  },
  {
    rule: 'V1',
    title: 'an empty resource is INVALID_ARGUMENT INVALID_FIELD naming the field',
    async run(context) {
      const [a] = workers(context);
      const refusal = refused(
        await acquire(context, a, ''),
        grpc.status.INVALID_ARGUMENT,
        'INVALID_FIELD',
        'an Acquire with resource ""',
      );
      if (!refusal.fieldViolations.some((violation) => violation.field === 'resource')) {
        throw new Broken(
          `INVALID_FIELD without a violation of field "resource": ${JSON.stringify(refusal.fieldViolations)}`,
        );
      }
    },
  },
  {
    rule: 'V2',
    title:
      'an id with a control character, and a TTL under 100 ms, are INVALID_ARGUMENT INVALID_FIELD naming the field',
    async run(context) {
      const [a] = workers(context);
      const cases = [
        ['resource', { resource: `${context.fresh('job')}\u0007`, ttl_ms: TTL_MS }],
        ['ttl_ms', { resource: context.fresh('job'), ttl_ms: '50' }],
      ] as const;
      for (const [field, fields] of cases) {
        const refusal = refused(
          await context.wire.coordinator<object, unknown>(
            'Acquire',
            { request_id: context.fresh('request'), owner_id: a.identity, incarnation: '1', ...fields },
            a,
          ),
          grpc.status.INVALID_ARGUMENT,
          'INVALID_FIELD',
          `an Acquire with a bad ${field}`,
        );
        if (!refusal.fieldViolations.some((violation) => violation.field === field))
          throw new Broken(
            `INVALID_FIELD without a violation of field "${field}": ${JSON.stringify(refusal.fieldViolations)}`,
          );
      }
      // The sink validates on its own (V1): a Write with an empty result_id.
      const refusal = refused(
        await write(context, a, context.fresh('job'), '1', '', 'x'),
        grpc.status.INVALID_ARGUMENT,
        'INVALID_FIELD',
        'a Write with result_id ""',
      );
      if (!refusal.fieldViolations.some((violation) => violation.field === 'result_id'))
        throw new Broken(`the sink's INVALID_FIELD names no result_id: ${JSON.stringify(refusal.fieldViolations)}`);
    },
  },
  EXTENSION_CHECKS.V3,
  {
    rule: 'T1',
    title: 'past token 2^64−1 an Acquire is RESOURCE_EXHAUSTED TOKEN_SPACE_EXHAUSTED: no token wraps',
    async run(context) {
      const coordinator = coordinatorCaller(context);
      const [a] = workers(context);
      const resource = context.fresh('job');
      answered(await release(context, a, await grant(context, a, resource)), 'the Release');
      const { index } = await owningSink(context, resource);
      answered(
        await advanceFence(context, coordinator, resource, MAX_TOKEN, context.fresh('grant'), index),
        `AdvanceFence of ${resource} to ${MAX_TOKEN}`,
      );
      refused(
        await acquire(context, a, resource),
        grpc.status.RESOURCE_EXHAUSTED,
        'TOKEN_SPACE_EXHAUSTED',
        `an Acquire once the fence is ${MAX_TOKEN}`,
      );
    },
  },
  REPLICA_CHECKS.H2,
  REPLICA_CHECKS.H7,
  {
    rule: 'health',
    title: 'grpc.health.v1 says fencing.v1.Sink SERVING on every sink, fencing.v1.Coordinator on a coordinator',
    async run(context) {
      const { sinks, coordinators } = context.wire.deployment;
      const status = async (address: string, service: string) => {
        const answer = await healthOf(context, address, service);
        if (answer === undefined) throw new Skip(`${address} serves no grpc.health.v1.Health`);
        return answer;
      };
      for (const sink of sinks) {
        const answer = await status(sink, 'fencing.v1.Sink');
        if (answer !== 'SERVING') throw new Broken(`${sink} says fencing.v1.Sink is ${answer}`);
      }
      // With replicas only the leader serves (H2): one SERVING is the rule.
      const answers = await Promise.all(coordinators.map((address) => status(address, 'fencing.v1.Coordinator')));
      if (!answers.includes('SERVING'))
        throw new Broken(`no coordinator says fencing.v1.Coordinator is SERVING: ${answers.join(', ')}`);
    },
  },
  EXTENSION_CHECKS.reflection,
  {
    rule: 'P4',
    title: 'a sink that does not own a resource refuses writes to it (TOKEN_NOT_ISSUED)',
    async run(context) {
      if (context.wire.deployment.sinks.length < 2) throw new Skip('needs two sinks or more (--sink a,b)');
      const { a, resource, lease, index } = await heldAtSink(context);
      const other = (index + 1) % context.wire.deployment.sinks.length;
      refused(
        await write(context, a, resource, lease.token, context.fresh('result'), 'stray', other),
        grpc.status.FAILED_PRECONDITION,
        'TOKEN_NOT_ISSUED',
        `a write to sink ${context.wire.deployment.sinks[other]}, which does not own ${resource}`,
      );
    },
  },
  EXTENSION_CHECKS.WriteStream,
  EXTENSION_CHECKS.AdvanceFenceStream,
  EXTENSION_CHECKS.LeaseStream,
  EXTENSION_CHECKS.ForceRelease,
  EXTENSION_CHECKS.ListResults,
];

/** The rule ids the kit checks. */
export const RULES: readonly string[] = CHECKS.map((check) => check.rule);

/** Runs the checks (those of `only`, if given) one after another, under a random prefix of this run. */
export async function runChecks(wire: Wire, only?: readonly string[]): Promise<CheckResult[]> {
  const prefix = `conformance-${randomUUID().slice(0, 8)}`;
  let serial = 0;
  const context: CheckContext = { wire, fresh: (kind) => `${prefix}-${kind}-${++serial}` };
  const results: CheckResult[] = [];
  for (const check of CHECKS.filter((c) => !only || only.includes(c.rule))) {
    try {
      await check.run(context);
      results.push({ rule: check.rule, title: check.title, status: 'held', detail: '' });
    } catch (error) {
      if (error instanceof Broken)
        results.push({ rule: check.rule, title: check.title, status: 'failed', detail: error.message });
      else if (error instanceof Skip)
        results.push({ rule: check.rule, title: check.title, status: 'skipped', detail: error.message });
      else throw error;
    }
  }
  return results;
}
