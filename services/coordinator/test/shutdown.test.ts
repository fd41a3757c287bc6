// Shutdown while an Acquire is mid-flight: stop() must not close the store
// under an Acquire that is still between the sink and the store, even when
// its caller has already gone away (the server no longer waits for it then).
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unaryCall, type AcquireRequest, type AcquireResponse__Output } from '@fencer/proto';
import { registry } from '@fencer/server-kit';
import { stopFencer, tempDir, type FencerProcess, coordinatorApi, coordinatorClient, ok } from '@fencer/testkit';
import { fresh, startSinkProcess, startTestCoordinator } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let sinkProcess: FencerProcess;

beforeAll(async () => {
  dir = tempDir();
  sinkProcess = await startSinkProcess(dir.path); // this file's own: it gets SIGSTOPped
});

afterAll(async () => {
  sinkProcess.kill('SIGCONT');
  await stopFencer(sinkProcess);
  dir.remove();
});

/** How many Acquires have finished with `code`, counted when the handler settles (whether or not anyone still listens). */
async function acquiresFinished(code: string): Promise<number> {
  const metric = registry.getSingleMetric('fencer_rpc_calls_total');
  const values = (await metric!.get()).values;
  return values.filter((v) => v.labels.method === 'Acquire' && v.labels.code === code).reduce((n, v) => n + v.value, 0);
}

describe('stop() with an Acquire in flight', () => {
  it('waits for an Acquire whose caller gave up while it waited on the sink, before closing the store', async () => {
    let onAdvance: () => void = () => {};
    const started = await startTestCoordinator(sinkProcess.address, {
      sinkDeadlineMs: 1_000,
      newGrantId: () => {
        onAdvance();
        return randomUUID();
      },
    });
    const client = coordinatorClient(started.coordinator.address);
    try {
      ok(
        await coordinatorApi(client).acquire({
          request_id: fresh('q'),
          resource: fresh('warm-up'),
          owner_id: 'alice',
          incarnation: '1',
          ttl_ms: '1000',
        }),
      );
      const unavailableBefore = await acquiresFinished('UNAVAILABLE');

      sinkProcess.kill('SIGSTOP');
      const gaveUp = new AbortController();
      onAdvance = () => gaveUp.abort(); // the caller goes away once the AdvanceFence is on its way
      const request: AcquireRequest = {
        request_id: fresh('q'),
        resource: fresh('stopping'),
        owner_id: 'alice',
        incarnation: '1',
        ttl_ms: '1000',
      };
      const abandoned = await unaryCall<AcquireRequest, AcquireResponse__Output>(client, client.Acquire, request, {
        signal: gaveUp.signal,
      }).catch((e: grpc.ServiceError) => e.code);
      expect(abandoned).toBe(grpc.status.CANCELLED);

      await started.coordinator.stop();
      // The Acquire ended (SINK_UNAVAILABLE at the sink deadline) before stop() resolved, so nothing ran on after the store closed.
      expect(await acquiresFinished('UNAVAILABLE')).toBe(unavailableBefore + 1);
    } finally {
      sinkProcess.kill('SIGCONT');
      client.close();
      await started.coordinator.stop();
      started.remove();
    }
  });
});
