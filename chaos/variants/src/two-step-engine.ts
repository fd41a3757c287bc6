// The bug F2 exists to prevent, on purpose: the fence is checked in one step
// and the result stored in another, so an AdvanceFence can slip in between
// and a write under the old token lands after the new fence was acknowledged
// (S3), over the successor's result (S4, S6).
import { KeyedLock } from '@fencer/common';
import {
  decideWrite,
  SinkEngine,
  type SinkApi,
  type SinkStore,
  type WriteCommand,
  type WriteOutcome,
} from '@fencer/sink';

/**
 * A sink engine whose Write checks the fence (under a per-resource lock, as
 * the real engine does) and then, after the lock is released and `pause`
 * has run, commits: every write that passed the check waits in `pause`
 * with nothing holding AdvanceFence back. AdvanceFence, Read and GetFence
 * are the real engine's. Rejects like SinkEngine when the store failed.
 */
export class TwoStepEngine implements SinkApi {
  readonly #lock = new KeyedLock();
  readonly #correct: SinkEngine;

  /** @param pause runs between the check and the commit of every write that passed the check. */
  constructor(
    private readonly store: SinkStore,
    private readonly pause: (command: WriteCommand) => Promise<void>,
  ) {
    this.#correct = new SinkEngine(store);
  }

  async write(command: WriteCommand): Promise<WriteOutcome> {
    const { fence, decision } = await this.#lock.run(command.resource, async () => {
      const current = await this.store.fence(command.resource);
      const existing = await this.store.result(command.resource, command.resultId);
      return { fence: current?.fence ?? 0n, decision: decideWrite(current, existing, command) };
    });
    switch (decision.kind) {
      case 'apply':
        await this.pause(command);
        await this.store.commit([
          {
            kind: 'result',
            resource: command.resource,
            resultId: command.resultId,
            result: { token: command.token, payload: command.payload },
          },
        ]);
        return { kind: 'applied', fence };
      case 'replayed':
      case 'conflict':
        return { kind: decision.kind, fence };
      case 'stale':
      case 'not-issued':
      case 'owner-mismatch':
        return { kind: decision.kind, fence: decision.fence };
    }
  }

  advanceFence: SinkApi['advanceFence'] = (command) => this.#correct.advanceFence(command);
  read: SinkApi['read'] = (resource, resultId) => this.#correct.read(resource, resultId);
  getFence: SinkApi['getFence'] = (resource) => this.#correct.getFence(resource);
  inspect: SinkApi['inspect'] = (resource, limit) => this.#correct.inspect(resource, limit);
}
