// Rules about what survives a crash, checked only when the kit is given
// commands that SIGKILL a service and start it again (--coordinator-restart-cmd,
// --sink-restart-cmd): L7 and R3 across a coordinator restart, F6 across a
// sink's. What happened before the kill is judged from the answers after it.
import * as grpc from '@grpc/grpc-js';
import {
  acquire,
  answered,
  Broken,
  grant,
  heldAtSink,
  refused,
  release,
  restartWith,
  untilAnswered,
  workers,
  write,
  type Check,
  type CheckContext,
} from './support.js';

const restartCoordinator = (context: CheckContext) =>
  restartWith(context.wire.deployment.restart.coordinator, '--coordinator-restart-cmd');

export const RESTART_CHECKS = {
  L7: {
    rule: 'L7',
    title:
      'a lease granted before a coordinator restart is still held after it: LEASE_HELD to another owner, renewed by its holder, and the next token is larger (L6)',
    async run(context) {
      const [a, b] = workers(context);
      const resource = context.fresh('job');
      const lease = await grant(context, a, resource);
      await restartCoordinator(context);
      refused(
        await untilAnswered('the coordinator after its restart', () => acquire(context, b, resource)),
        grpc.status.ABORTED,
        'LEASE_HELD',
        `${b.identity}'s Acquire, after the restart, of the lease ${a.identity} got before it`,
      );
      answered(
        await context.wire.coordinator<object, unknown>(
          'Renew',
          { resource, owner_id: a.identity, incarnation: lease.incarnation, token: lease.token, ttl_ms: '0' },
          a,
        ),
        "the holder's Renew after the restart",
      );
      answered(await release(context, a, lease), "the holder's Release after the restart");
      const next = await grant(context, b, resource);
      if (BigInt(next.token) <= BigInt(lease.token))
        throw new Broken(`token ${next.token} granted after the restart, ${lease.token} before it (L6)`);
    },
  },
  R3: {
    rule: 'R3',
    title: 'request records survive a coordinator restart: the retried Acquire gets the same token, marked replayed',
    async run(context) {
      const [a] = workers(context);
      const resource = context.fresh('job');
      const requestId = context.fresh('request');
      const first = answered(await acquire(context, a, resource, requestId), 'the Acquire before the restart');
      await restartCoordinator(context);
      const again = answered(
        await untilAnswered('the coordinator after its restart', () => acquire(context, a, resource, requestId)),
        'its retry after the restart',
      );
      if (again.lease?.token !== first.lease?.token || again.replayed !== true)
        throw new Broken(
          `the retry after the restart got token ${again.lease?.token} (replayed ${again.replayed}), the first ${first.lease?.token}`,
        );
    },
  },
  F6: {
    rule: 'F6',
    title: 'an acknowledged Write and fence survive the sink being SIGKILLed: Read and GetFence give them back',
    async run(context) {
      const { a, resource, lease, index } = await heldAtSink(context);
      const resultId = context.fresh('result');
      const written = answered(
        await write(context, a, resource, lease.token, resultId, 'durable', index),
        'the Write before the restart',
      );
      if (written.outcome !== 'APPLIED') throw new Broken(`the Write before the restart was ${written.outcome}`);
      await restartWith(context.wire.deployment.restart.sink, '--sink-restart-cmd');
      const read = answered(
        await untilAnswered('the sink after its restart', () =>
          context.wire.sink<object, { payload: Buffer; token: string }>(
            'Read',
            { resource, result_id: resultId },
            a,
            index,
          ),
        ),
        'the Read after the restart',
      );
      if (read.payload.toString() !== 'durable' || read.token !== lease.token)
        throw new Broken(
          `after the restart Read gave ${JSON.stringify(read.payload.toString())} under token ${read.token}, not "durable" under ${lease.token}`,
        );
      const { fence } = answered(
        await context.wire.sink<object, { fence: string }>('GetFence', { resource }, a, index),
        'GetFence after the restart',
      );
      if (fence !== lease.token) throw new Broken(`after the restart the fence is ${fence}, not ${lease.token}`);
    },
  },
} satisfies Record<string, Check>;
