// `fencer worker --trace-file` against a traced coordinator and sink, all
// real processes: one loop round is one trace across the three span files,
// the worker's `task` at its root, its steps below, each step's calls below
// them, and the coordinator's and the sink's spans of those calls below the
// worker's (the LeaseStream and WriteStream messages carry the context in
// the message).
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SpanLine } from '@fencer/server-kit';
import {
  readTraceFile,
  spansAfterStop,
  runFencer,
  startTracedServices,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';

const running: FencerProcess[] = [];
const dir = tempDir();
afterAll(async () => {
  await Promise.all(running.map((child) => stopFencer(child)));
  dir.remove();
});

describe('fencer worker --trace-file', () => {
  it('one loop round is one trace: task, its steps, their calls, and the services under them', async () => {
    const { sink, sinkFile, coordinator, coordinatorFile } = await startTracedServices(dir.path, { sinkTraced: true });
    running.push(sink, coordinator);
    const workerFile = join(dir.path, 'worker.jsonl');
    const loop = ['--resource', 'traced', '--steps', '2', '--step-ms', '10', '--rounds', '1'];
    const args = [
      'worker',
      '--coordinator',
      coordinator.address,
      '--sink',
      sink.address,
      '--insecure',
      '--owner',
      'w1',
    ];
    const worker = await runFencer([...args, ...loop, '--trace-file', workerFile]);
    expect(worker.code, worker.stderr).toBe(0);

    const spans = [
      ...readTraceFile<SpanLine>(workerFile),
      ...(await spansAfterStop<SpanLine>(coordinator, coordinatorFile)),
      ...(await spansAfterStop<SpanLine>(sink, sinkFile)),
    ];
    const task = spans.find((span) => span.name === 'task');
    expect(task, JSON.stringify(spans, null, 1)).toMatchObject({
      service: 'fencer-worker',
      attributes: { 'fencer.resource': 'traced' },
    });
    expect(task!.parentSpanId).toBeUndefined();
    const childrenOf = (parent: SpanLine) => spans.filter((span) => span.parentSpanId === parent.spanId);
    const only = (found: SpanLine[], what: string) => {
      expect(found, `${what}\n${JSON.stringify(spans, null, 1)}`).toHaveLength(1);
      return found[0]!;
    };

    // The round's steps, in order, under the task.
    const steps = childrenOf(task!).sort((a, b) => a.startUs - b.startUs);
    expect(steps.map((span) => span.name)).toEqual(['acquire', 'write', 'write', 'release']);
    const [acquire, write, , release] = steps as [SpanLine, SpanLine, SpanLine, SpanLine];

    // Acquire: the worker's LeaseStream message, the coordinator's span of
    // it, L3's steps there, and the sink's side of its AdvanceFence.
    const sent = only(
      childrenOf(acquire).filter((span) => span.name === 'LeaseStream Acquire'),
      "the worker's Acquire message",
    );
    expect(sent).toMatchObject({ service: 'fencer-worker', kind: 'CLIENT' });
    const granted = only(childrenOf(sent), "the coordinator's Acquire");
    expect(granted).toMatchObject({ service: 'fencer-coordinator', kind: 'SERVER', name: 'LeaseStream Acquire' });
    const advance = only(
      childrenOf(granted).filter((span) => span.name === 'advance fence'),
      'advance fence',
    );
    const advanced = spans.filter(
      (span) => span.service === 'fencer-sink' && span.kind === 'SERVER' && span.traceId === task!.traceId,
    );
    expect(advanced.some((span) => span.name === 'AdvanceFenceStream message')).toBe(true);
    expect(advance.traceId).toBe(task!.traceId);

    // A Write: the worker's WriteStream message, and the sink's handling of it below.
    const call = only(
      childrenOf(write).filter((span) => span.kind === 'CLIENT'),
      "the worker's Write message",
    );
    expect(call.name).toBe('WriteStream Write');
    const handled = only(childrenOf(call), "the sink's Write");
    expect(handled).toMatchObject({ service: 'fencer-sink', kind: 'SERVER', name: 'WriteStream Write' });
    expect(childrenOf(handled).map((span) => span.name)).toEqual(expect.arrayContaining(['decide', 'group commit']));

    // Release: the message and the coordinator's span of it.
    const releaseSent = only(
      childrenOf(release).filter((span) => span.name === 'LeaseStream Release'),
      "the worker's Release message",
    );
    expect(only(childrenOf(releaseSent), "the coordinator's Release")).toMatchObject({
      service: 'fencer-coordinator',
      kind: 'SERVER',
    });
  });
});
