// toFencerError on refusals from a real sink process: what a worker meets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sinkCalls, startFencer, stopFencer, tempDir, type FencerProcess, type SinkCalls } from '@fencer/testkit';
import { InvalidRequestError, LeaseLostError, ResultConflictError, toFencerError } from '../src/index.js';

const rejection = async (pending: Promise<unknown>) =>
  toFencerError(
    await pending.then(
      () => undefined,
      (error: unknown) => error,
    ),
  );

describe('typed errors from a real sink', () => {
  let dir: ReturnType<typeof tempDir>;
  let sink: FencerProcess;
  let client: SinkCalls;
  beforeAll(async () => {
    dir = tempDir('fencer-client-errors-');
    sink = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', dir.path]);
    client = sinkCalls(sink.address);
  });
  afterAll(async () => {
    client?.close();
    if (sink) await stopFencer(sink);
    dir?.remove();
  });

  it('STALE_TOKEN is a LeaseLostError with the fence, RESULT_CONFLICT and INVALID_FIELD their own classes', async () => {
    await client.advance({ resource: 'job', token: '2', grant_id: 'g2' });
    await client.write({ resource: 'job', token: '2', result_id: 'r', payload: Buffer.from('a') });
    const stale = await rejection(
      client.write({ resource: 'job', token: '1', result_id: 'x', payload: Buffer.from('a') }),
    );
    expect(stale).toBeInstanceOf(LeaseLostError);
    expect([(stale as LeaseLostError).fence, stale.retryable]).toEqual([2n, false]);
    const conflict = await rejection(
      client.write({ resource: 'job', token: '2', result_id: 'r', payload: Buffer.from('b') }),
    );
    expect(conflict).toBeInstanceOf(ResultConflictError);
    const invalid = await rejection(
      client.write({ resource: '', token: '2', result_id: 'r', payload: Buffer.from('b') }),
    );
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect(invalid.fieldViolations.map((v) => v.field)).toEqual(['resource']);
  });
});
