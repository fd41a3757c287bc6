// AdvanceFenceStream, the project's streamed AdvanceFence, against a real
// `fencer sink` process with credentials, driven by @fencer/proto's
// MessageStream (what the coordinator sends its advances with): every
// message is judged as the unary AdvanceFence (F4, A5, V1) through the same
// commit path, answered by (resource, grant_id), and a refused message ends
// nothing; only the coordinator may open one, and a caller refused is
// refused before one message is read (A4, A6).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  MessageStream,
  remoteFailure,
  remoteFailureOfStatus,
  type AdvanceFenceRequest,
  type AdvanceFenceStreamRequest,
  type AdvanceFenceStreamResponse__Output,
  type StreamFailure,
} from '@fencer/proto';
import {
  CODE,
  sinkCalls,
  sinkClient,
  startSecuredSink,
  stopFencer,
  tempDir,
  writeOutcome,
  writeTestCredentials,
  type FencerProcess,
  type SinkCalls,
} from '@fencer/testkit';

const TOKENS = {
  coordinator: 'coordinator-token-as-0123456789',
  'worker-a': 'worker-a-token-as-0123456789',
} as const;

let dir: ReturnType<typeof tempDir>;
let sink: FencerProcess;
let unary: SinkCalls;
let worker: SinkCalls;
const closers: (() => void)[] = [];

beforeAll(async () => {
  dir = tempDir('fencer-advance-stream-');
  sink = await startSecuredSink(writeTestCredentials(dir.path, TOKENS), join(dir.path, 'data'));
  unary = sinkCalls(sink.address, TOKENS.coordinator);
  worker = sinkCalls(sink.address, TOKENS['worker-a']);
  closers.push(unary.close, worker.close);
});

afterAll(async () => {
  for (const close of closers) close();
  if (sink) await stopFencer(sink);
  dir?.remove();
});

/** An AdvanceFenceStream as `identity`; `ask` resolves with an answer's outcome, or rejects with the stream's failure. */
function stream(identity: keyof typeof TOKENS) {
  const client = sinkClient(sink.address);
  const messages = new MessageStream<AdvanceFenceStreamRequest, AdvanceFenceStreamResponse__Output>({
    open: () => client.AdvanceFenceStream(bearer(TOKENS[identity])),
    timeoutMs: 10_000,
    keyOfAnswer: (answer) => JSON.stringify([answer.resource, answer.grant_id]),
    noun: 'advance',
  });
  closers.push(() => {
    messages.end();
    client.close();
  });
  return async (message: AdvanceFenceStreamRequest) => {
    const answer = await messages.send(
      JSON.stringify([message.advance?.resource ?? '', message.advance?.grant_id ?? '']),
      message,
    );
    const named = { resource: answer.resource, grantId: answer.grant_id };
    if (answer.advanced) return { ...named, outcome: 'ADVANCED', fence: answer.advanced.fence };
    const failure = remoteFailureOfStatus(answer.refused!);
    const fields = failure.fieldViolations.map((violation) => violation.field);
    return { ...named, outcome: failure.reason, code: failure.code, fence: failure.metadata.fence, fields };
  };
}

const advance = (resource: string, token: number, grantId = `${resource}-${token}`, owner = 'worker-a') => ({
  advance: { resource, token: String(token), grant_id: grantId, owner_id: owner } satisfies AdvanceFenceRequest,
});

describe('AdvanceFenceStream', { timeout: 30_000 }, () => {
  it('F4, A5, V1: every outcome on one stream, each answer naming its advance, and the stream goes on', async () => {
    const ask = stream('coordinator');
    const expectations: [string, AdvanceFenceStreamRequest, object][] = [
      ['advanced', advance('as', 2), { resource: 'as', grantId: 'as-2', outcome: 'ADVANCED', fence: '2' }],
      ["the same grant's retry", advance('as', 2), { outcome: 'ADVANCED', fence: '2' }],
      [
        'a lower token of another grant',
        advance('as', 1),
        { resource: 'as', grantId: 'as-1', outcome: 'FENCE_REGRESSION', code: CODE.FAILED_PRECONDITION, fence: '2' },
      ],
      [
        'the same token of another grant',
        advance('as', 2, 'other'),
        { outcome: 'FENCE_REGRESSION', code: CODE.FAILED_PRECONDITION, fence: '2' },
      ],
      [
        'invalid fields',
        advance('as', 0, 'g\u0000'),
        { outcome: 'INVALID_FIELD', code: CODE.INVALID_ARGUMENT, fields: ['token', 'grant_id'] },
      ],
      [
        'no advance at all',
        {},
        { resource: '', grantId: '', outcome: 'INVALID_FIELD', code: CODE.INVALID_ARGUMENT, fields: ['advance'] },
      ],
      ['advanced after all of that', advance('as', 3), { outcome: 'ADVANCED', fence: '3' }],
    ];
    for (const [what, message, expected] of expectations) {
      expect({ ...(await ask(message)), what }).toMatchObject({ what, ...expected });
    }
    // Durable and bound to its owner (A5), as the unary call leaves it: worker-a writes under token 3.
    expect((await unary.getFence('as')).fence).toBe('3');
    const written = worker.write({ resource: 'as', token: '3', result_id: 'r', payload: Buffer.from('x') });
    expect(await writeOutcome(written)).toEqual({ outcome: 'APPLIED', fence: '3' });
  });

  it('the same commit path as the unary AdvanceFence: a grant made one way is a retry or a regression the other way', async () => {
    const ask = stream('coordinator');
    await unary.advance(advance('both', 5).advance);
    expect(await ask(advance('both', 5))).toMatchObject({ outcome: 'ADVANCED', fence: '5' });
    expect(await ask(advance('both', 4))).toMatchObject({ outcome: 'FENCE_REGRESSION', fence: '5' });
    expect(await ask(advance('both', 7))).toMatchObject({ outcome: 'ADVANCED', fence: '7' });
    // The unary retry of the streamed grant is accepted; another grant at 7 is not.
    expect((await unary.advance(advance('both', 7).advance)).fence).toBe('7');
    const refused = await unary.advance(advance('both', 7, 'other').advance).catch(remoteFailure);
    expect(refused).toMatchObject({ reason: 'FENCE_REGRESSION', metadata: { fence: '7' } });
  });

  it("A4: a worker's stream is refused PERMISSION_DENIED before any message is read; the fence stays", async () => {
    const ask = stream('worker-a');
    const failed = (await ask(advance('not-for-workers', 9)).catch((error: StreamFailure) => error)) as StreamFailure;
    expect(remoteFailure(failed)).toMatchObject({ code: CODE.PERMISSION_DENIED, reason: 'PERMISSION_DENIED' });
    expect((await unary.getFence('not-for-workers')).fence).toBe('0');
  });
});
