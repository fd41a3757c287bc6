// A task worker on @fencer/client: take the lease on a report, write its
// parts under the lease's fencing token, and stop the moment the lease is
// lost. Run: node worker.js COORDINATOR SINK TOKEN_FILE OWNER
import { readFileSync } from 'node:fs';
import {
  CoordinatorConnection,
  FencedWriter,
  LeaseHeldError,
  LeaseKeeper,
  LeaseLostError,
  SinkConnection,
} from '@fencer/client';

const [coordinatorAddress = '', sinkAddress = '', tokenFile = '', owner = ''] = process.argv.slice(2);
const token = readFileSync(tokenFile, 'utf8').trim();
const coordinator = new CoordinatorConnection({ address: coordinatorAddress, token });
const sink = new SinkConnection({ address: sinkAddress, token });

/** The work itself; it gives up as soon as the lease is lost. */
async function computePart(step: number, leaseLost: AbortSignal): Promise<string> {
  leaseLost.throwIfAborted();
  return `part ${step} of the December report`;
}

try {
  // Released when the block ends, however it ends.
  await using lease = await LeaseKeeper.acquire(coordinator, {
    resource: 'report-2026-12',
    ownerId: owner,
    ttlMs: 5_000,
  });
  const writer = new FencedWriter(sink, lease);
  for (const step of [1, 2, 3]) {
    const part = await computePart(step, lease.signal);
    // The result id names the work, not the attempt: a retry is stored once (F3).
    const receipt = await writer.write(`part-${step}`, part);
    console.log(`part ${step}: ${receipt.outcome} under token ${lease.token}`);
  }
} catch (error) {
  if (error instanceof LeaseHeldError) {
    console.log(`${error.holderOwnerId} holds the report for ${error.remainingMs} ms more`);
  } else if (error instanceof LeaseLostError) {
    console.log(`lease lost (${error.reason}): a successor owns the report now`);
  } else {
    throw error;
  }
} finally {
  coordinator.close();
  sink.close();
}
