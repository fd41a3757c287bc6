// The sink's commit path as trace spans (issue 22), recorded in memory: each
// call's lock wait, decision and the group commit it joined, under the
// call's own span, with the batch numbers showing which writes shared a sync.
import { afterAll, describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { spanPhases } from '@fencer/server-kit';
import { eventually } from '@fencer/testkit';
import { decideWrite } from '../src/core/fence-policy.js';
import { SinkEngine } from '../src/core/sink-engine.js';
import { memoryStore } from './doubles/memory-store.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
afterAll(() => provider.shutdown());

/** Runs `work` as a call's span named `name` (the gRPC server span in a real sink). */
const asCall = <T>(name: string, work: () => Promise<T>) =>
  trace.getTracer('test').startActiveSpan(name, async (span) => {
    try {
      return await work();
    } finally {
      span.end();
    }
  });

/** The phases recorded under the call span named `call`, by name. */
function phasesOf(call: string): Map<string, ReadableSpan> {
  const spans = exporter.getFinishedSpans();
  const parent = spans.find((span) => span.name === call);
  expect(parent, `a span named ${call}`).toBeDefined();
  const children = spans.filter((span) => span.parentSpanContext?.spanId === parent!.spanContext().spanId);
  return new Map(children.map((span) => [span.name, span]));
}

describe('the sink engine traced with spanPhases', () => {
  it('each call shows lock wait, decision and the synced batch it joined', async () => {
    const { store, backend } = memoryStore(undefined, { manualSync: true });
    const engine = new SinkEngine(store, decideWrite, spanPhases);
    const write = (resultId: string, token = 1n) =>
      engine.write({ resource: 'r', token, resultId, payload: new Uint8Array([1]), writer: null });

    const advanced = asCall('advance', () =>
      engine.advanceFence({ resource: 'r', token: 1n, grantId: 'g1', ownerId: null }),
    );
    await eventually(() => backend.waitingBatches === 1 || undefined, { what: 'the fence batch' });
    backend.syncNext();
    await advanced;

    // Batch 2 holds A alone while it syncs; B and C, decided meanwhile, gather into batch 3.
    const a = asCall('write A', () => write('A'));
    await eventually(() => backend.waitingBatches === 1 || undefined, { what: "A's batch" });
    const b = asCall('write B', () => write('B'));
    const c = asCall('write C', () => write('C'));
    const stale = asCall('unissued write', () => write('D', 2n));
    await eventually(() => store.stats.pending === 3 || undefined, { what: 'B and C decided' });
    backend.syncNext();
    await eventually(() => backend.waitingBatches === 1 || undefined, { what: 'batch 3' });
    backend.syncNext();
    await Promise.all([a, b, c, stale]);

    const fence = phasesOf('advance');
    expect([...fence.keys()]).toEqual(['lock wait', 'decide', 'group commit']);
    expect(fence.get('decide')!.attributes).toEqual({ 'fencer.decision': 'advanced', 'fencer.fence': '1' });
    expect(fence.get('group commit')!.attributes).toEqual({
      'fencer.batch.joined': true,
      'fencer.batch': 1,
      'fencer.batch.ops': 1,
    });
    const batchOf = (call: string) => phasesOf(call).get('group commit')!.attributes;
    expect(batchOf('write A')).toEqual({ 'fencer.batch.joined': true, 'fencer.batch': 2, 'fencer.batch.ops': 1 });
    expect(batchOf('write B')).toEqual({ 'fencer.batch.joined': true, 'fencer.batch': 3, 'fencer.batch.ops': 2 });
    expect(batchOf('write C')).toEqual({ 'fencer.batch.joined': true, 'fencer.batch': 3, 'fencer.batch.ops': 2 });
    // A refusal writes nothing: it only waits for what its answer rests on.
    const refused = phasesOf('unissued write');
    expect(refused.get('decide')!.attributes).toMatchObject({ 'fencer.decision': 'not-issued' });
    expect(batchOf('unissued write')).toEqual({ 'fencer.batch.joined': false });
  });
});
