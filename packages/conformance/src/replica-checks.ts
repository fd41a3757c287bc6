// Rules of coordinator replicas (H), checked when the kit is given several
// coordinator addresses: one serves at a time (H2), and a client that
// follows NOT_LEADER to the leader, retrying under its request id, gets one
// grant (H7).
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import {
  ANSWER_WITHIN_MS,
  answered,
  Broken,
  describeRefusal,
  healthOf,
  refused,
  Skip,
  unanswered,
  workers,
  type Check,
  type CheckContext,
  type WireLease,
} from './support.js';
import type { Answer, Refusal } from './wire.js';

const isNotLeader = (answer: Answer<unknown>): answer is { ok: false; refusal: Refusal } =>
  !answer.ok &&
  answer.refusal.code === grpc.status.UNAVAILABLE &&
  (answer.refusal.errorInfo?.reason ?? answer.refusal.trailer) === 'NOT_LEADER';

function replicas(context: CheckContext): readonly string[] {
  const { coordinators } = context.wire.deployment;
  if (coordinators.length < 2) throw new Skip('needs two coordinators or more (--coordinator a,b)');
  return coordinators;
}

const acquireAt = (context: CheckContext, address: string, resource: string, requestId: string) => {
  const [a] = workers(context);
  return context.wire.coordinatorAt<object, { lease: WireLease | null; replayed: boolean }>(
    address,
    'Acquire',
    { request_id: requestId, resource, owner_id: a.identity, incarnation: '1', ttl_ms: '30000' },
    a,
  );
};

export const REPLICA_CHECKS = {
  H2: {
    rule: 'H2',
    title:
      'of several coordinators one grants; the others answer UNAVAILABLE NOT_LEADER, and health says SERVING on the leader only',
    async run(context) {
      const addresses = replicas(context);
      const deadline = performance.now() + ANSWER_WITHIN_MS;
      // Until one grants: an election may be under way.
      for (;;) {
        const answers = await Promise.all(
          addresses.map((address) =>
            acquireAt(context, address, context.fresh('job'), context.fresh('request')).then((answer) => ({
              address,
              answer,
            })),
          ),
        );
        const granted = answers.filter(({ answer }) => answer.ok).map(({ address }) => address);
        if (granted.length > 1) throw new Broken(`${granted.join(' and ')} each granted an Acquire at the same time`);
        for (const { address, answer } of answers) {
          if (answer.ok || isNotLeader(answer)) continue;
          if (answer.refusal.code === grpc.status.UNAVAILABLE || answer.refusal.code === grpc.status.DEADLINE_EXCEEDED)
            throw unanswered(`an Acquire at ${address}`, answer.refusal);
          throw new Broken(
            `${address} answered an Acquire ${describeRefusal(answer.refusal)}, neither a grant nor UNAVAILABLE NOT_LEADER`,
          );
        }
        if (granted.length === 1) {
          const statuses = await Promise.all(
            addresses.map((address) => healthOf(context, address, 'fencing.v1.Coordinator')),
          );
          // A deployment without health says nothing here: the grants above were the rule.
          if (statuses.includes(undefined)) return;
          const serving = addresses.filter((_, index) => statuses[index] === 'SERVING');
          if (serving.length !== 1 || serving[0] !== granted[0])
            throw new Broken(
              `${granted[0]} grants, but health says fencing.v1.Coordinator SERVING on [${serving.join(', ')}]`,
            );
          return;
        }
        if (performance.now() > deadline)
          throw new Error(`no coordinator of ${addresses.join(', ')} granted within ${ANSWER_WITHIN_MS / 1000} s`);
        await sleep(500);
      }
    },
  },
  H7: {
    rule: 'H7',
    title:
      'NOT_LEADER names the leader; an Acquire retried there under its request id is granted once, and a standby still grants nothing',
    async run(context) {
      const addresses = replicas(context);
      const resource = context.fresh('job');
      const requestId = context.fresh('request');
      let standby: { address: string; leader: string | undefined } | undefined;
      for (const address of addresses) {
        const answer = await context.wire.coordinatorAt<object, unknown>(
          address,
          'Describe',
          { resource },
          workers(context)[0],
        );
        if (isNotLeader(answer)) standby = { address, leader: answer.refusal.errorInfo?.metadata.leader };
      }
      if (!standby) throw new Skip(`no coordinator of ${addresses.join(', ')} answered NOT_LEADER: see H2`);
      const { address, leader } = standby;
      if (leader === undefined || leader === '')
        throw new Skip(`${address}'s NOT_LEADER names no leader (PROTOCOL.md: "when known")`);
      refused(
        await acquireAt(context, address, resource, requestId),
        grpc.status.UNAVAILABLE,
        'NOT_LEADER',
        `an Acquire at the standby ${address}`,
      );
      const first = answered(
        await acquireAt(context, leader, resource, requestId),
        `the Acquire retried at ${leader}, the leader ${address} named`,
      );
      const again = answered(await acquireAt(context, leader, resource, requestId), `its retry at ${leader}`);
      if (again.lease?.token !== first.lease?.token || again.replayed !== true)
        throw new Broken(
          `the retry at ${leader} got token ${again.lease?.token} (replayed ${again.replayed}), the first ${first.lease?.token}`,
        );
      refused(
        await acquireAt(context, address, resource, requestId),
        grpc.status.UNAVAILABLE,
        'NOT_LEADER',
        `the granted Acquire retried at the standby ${address}`,
      );
    },
  },
} satisfies Record<string, Check>;
