// A traced worker's LeaseStream and WriteStream messages join its trace: a
// worker process with an OpenTelemetry SDK (here, the test's own, recording
// in memory) that acquires and writes inside a span of its own gets a
// CLIENT span per message, and the coordinator's and the sink's spans of
// those calls, read from their --trace-file, are its descendants in one
// trace. An untraced caller's messages stay traces of the coordinator's own
// (services/coordinator's tracing test).
import { afterAll, describe, expect, it } from 'vitest';
import { context, propagation, trace, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { spansAfterStop, startTracedServices, stopFencer, tempDir, type FencerProcess } from '@fencer/testkit';
import { CoordinatorConnection, SinkConnection } from '../src/index.js';

/** One line of a --trace-file, as much of it as this test reads. */
interface SpanLine {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: string;
}

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
// Sets the tracer provider, the async-hooks context manager and the W3C
// propagator, as a worker's own SDK set-up would.
provider.register();

const running: FencerProcess[] = [];
const dir = tempDir();
afterAll(async () => {
  await Promise.all(running.map((child) => stopFencer(child)));
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
  dir.remove();
});

describe('a traced worker on LeaseStream and WriteStream', () => {
  it("sends each lease call and write as a CLIENT span whose trace the coordinator's and the sink's spans join", async () => {
    const { sink, sinkFile, coordinator, coordinatorFile } = await startTracedServices(dir.path, { sinkTraced: true });
    running.push(sink, coordinator);
    const connection = new CoordinatorConnection({ address: coordinator.address, callTimeoutMs: 10_000 });
    const sinkConnection = new SinkConnection({ address: sink.address, callTimeoutMs: 10_000 });
    const identity = { resource: 'traced-task', ownerId: 'w1', incarnation: 1n };

    // The worker's own span around one task, as worker code would make it.
    const task = await trace.getTracer('worker').startActiveSpan('task', async (span: Span) => {
      const { lease } = await connection.acquire({ ...identity, requestId: 'q1', ttlMs: 5_000 });
      const write = { resource: identity.resource, token: lease.token, resultId: 'r1', payload: Buffer.from('x') };
      expect((await sinkConnection.write(write)).outcome).toBe('applied');
      expect(await connection.release({ ...identity, token: lease.token })).toBe(true);
      span.end();
      return span.spanContext();
    });
    // Outside any span: nothing recorded here, and the coordinator's span of it is a root.
    await connection.acquire({
      resource: 'untraced-task',
      ownerId: 'w1',
      incarnation: 1n,
      requestId: 'q2',
      ttlMs: 5_000,
    });
    connection.close();
    sinkConnection.close();

    const local = exporter.getFinishedSpans();
    const clientSpan = (name: string) => {
      const found = local.filter((span) => span.name === name);
      expect(found, `one ${name} span in the worker`).toHaveLength(1);
      expect(found[0]!.parentSpanContext?.spanId).toBe(task.spanId);
      return found[0]!.spanContext();
    };
    const acquireSent = clientSpan('LeaseStream Acquire');
    const releaseSent = clientSpan('LeaseStream Release');
    const writeSent = clientSpan('WriteStream Write');
    expect(local.map((span) => span.name).sort()).toEqual([
      'LeaseStream Acquire',
      'LeaseStream Release',
      'WriteStream Write',
      'task',
    ]);

    const coordinatorSpans = await spansAfterStop<SpanLine>(coordinator, coordinatorFile);
    const sinkSpans = await spansAfterStop<SpanLine>(sink, sinkFile);
    const served = (name: string, parent: { traceId: string; spanId: string }) => {
      const found = coordinatorSpans.filter((span) => span.name === name && span.parentSpanId === parent.spanId);
      expect(
        found,
        `the coordinator's ${name} under the worker's\n${JSON.stringify(coordinatorSpans, null, 1)}`,
      ).toHaveLength(1);
      expect(found[0]!.traceId).toBe(task.traceId);
      expect(found[0]!.kind).toBe('SERVER');
      return found[0]!;
    };
    const acquire = served('LeaseStream Acquire', acquireSent);
    served('LeaseStream Release', releaseSent);
    const advance = coordinatorSpans.find(
      (span) => span.name === 'advance fence' && span.parentSpanId === acquire.spanId,
    );
    expect(advance, "L3's advance fence under the coordinator's Acquire").toBeDefined();
    // The sink's side of that Acquire's AdvanceFence is in the worker's trace too.
    expect(
      sinkSpans.some(
        (span) => span.traceId === task.traceId && span.kind === 'SERVER' && span.name === 'AdvanceFenceStream message',
      ),
    ).toBe(true);

    // The sink handled the write in the worker's trace, under its CLIENT span.
    const written = sinkSpans.filter(
      (span) => span.name === 'WriteStream Write' && span.parentSpanId === writeSent.spanId,
    );
    expect(
      written,
      `the sink's WriteStream Write under the worker's\n${JSON.stringify(sinkSpans, null, 1)}`,
    ).toHaveLength(1);
    expect([written[0]!.traceId, written[0]!.kind]).toEqual([task.traceId, 'SERVER']);

    const roots = coordinatorSpans.filter(
      (span) => span.name === 'LeaseStream Acquire' && span.parentSpanId === undefined,
    );
    expect(roots).toHaveLength(1);
    expect(roots[0]!.traceId).not.toBe(task.traceId);
  });
});
