// Traces across two real processes: one Acquire's span tree, from the
// coordinator's server span through the AdvanceFence call into the sink's
// handler, read back from each process's --trace-file; and the same spans
// over OTLP when only the standard OTEL_* variables ask for them.
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { MessageStream, type LeaseStreamRequest, type LeaseStreamResponse__Output } from '@fencer/proto';
import type { SpanLine } from '@fencer/server-kit';
import {
  coordinatorApi,
  coordinatorClient,
  ok,
  spansAfterStop,
  sinkCalls,
  startFencer,
  startTracedServices,
  stopFencer,
  tempDir,
  type FencerProcess,
} from '@fencer/testkit';
import { fresh } from './helpers.js';

const running: FencerProcess[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((child) => stopFencer(child)));
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<FencerProcess> {
  const child = await startFencer(args, { env });
  running.push(child);
  return child;
}

function only(spans: readonly SpanLine[], where: (span: SpanLine) => boolean, what: string): SpanLine {
  const found = spans.filter(where);
  expect(found, `exactly one span: ${what}\n${JSON.stringify(spans, null, 1)}`).toHaveLength(1);
  return found[0]!;
}

/** A sink and a coordinator tracing to files (the sink only if `sinkTraced`), in a directory of their own. */
async function startTraced(options: { sinkTraced: boolean }) {
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const services = await startTracedServices(dir.path, options);
  running.push(services.sink, services.coordinator);
  return services;
}

const childOf = (parent: SpanLine) => (span: SpanLine) => span.parentSpanId === parent.spanId;
const end = (span: SpanLine) => span.startUs + span.durationUs;

describe('tracing (issue 22)', () => {
  it("one Acquire is one trace: L3's steps in order, the AdvanceFence message, the sink's decision and synced batch", async () => {
    const { sink, sinkFile, coordinator, coordinatorFile } = await startTraced({ sinkTraced: true });
    const client = coordinatorClient(coordinator.address);
    const resource = fresh('traced');
    const { lease } = ok(
      await coordinatorApi(client).acquire({
        request_id: fresh('req'),
        resource,
        owner_id: 'w1',
        incarnation: '1',
        ttl_ms: '5000',
      }),
    );
    client.close();
    const token = lease!.token;

    const coordinatorSpans = await spansAfterStop<SpanLine>(coordinator, coordinatorFile);
    const sinkSpans = await spansAfterStop<SpanLine>(sink, sinkFile);
    expect(new Set(coordinatorSpans.map((span) => span.service))).toEqual(new Set(['fencer-coordinator']));
    expect(new Set(sinkSpans.map((span) => span.service))).toEqual(new Set(['fencer-sink']));

    const acquire = only(
      coordinatorSpans,
      (span) => span.kind === 'SERVER' && span.name.endsWith('fencing.v1.Coordinator/Acquire'),
      'the Acquire server span',
    );
    expect(acquire.parentSpanId).toBeUndefined();
    const steps = coordinatorSpans.filter(childOf(acquire));
    expect(steps.map((span) => span.name)).toEqual(
      expect.arrayContaining(['reserve token', 'advance fence', 'record grant']),
    );
    const reserve = only(steps, (span) => span.name === 'reserve token', 'reserve token');
    const advance = only(steps, (span) => span.name === 'advance fence', 'advance fence');
    const record = only(steps, (span) => span.name === 'record grant', 'record grant');
    // L3: reserved durably, then the sink's fence, then the grant recorded.
    // OpenTelemetry takes a span's start from Date.now() (whole ms) and its
    // duration from the monotonic clock, so a start may read up to 1 ms early.
    expect(end(reserve)).toBeLessThanOrEqual(advance.startUs + 1_000);
    expect(end(advance)).toBeLessThanOrEqual(record.startUs + 1_000);
    expect(reserve.startUs).toBeLessThanOrEqual(advance.startUs);
    expect(advance.startUs).toBeLessThanOrEqual(record.startUs);
    expect(advance.attributes).toMatchObject({ 'fencer.advance': 'advanced', 'fencer.fence': token });

    // The advance leaves the coordinator as a CLIENT span, one message of
    // its AdvanceFenceStream carrying the trace context, and arrives in the
    // sink, in the same trace, as that message's SERVER span; the stream
    // itself, as long-lived as the process, makes no span.
    const call = only(coordinatorSpans, (span) => span.kind === 'CLIENT' && childOf(advance)(span), 'the sink call');
    expect(call.name).toBe('AdvanceFenceStream message');
    const handler = only(sinkSpans, (span) => span.kind === 'SERVER', "the sink's handler");
    expect(handler.name).toBe('AdvanceFenceStream message');
    expect(handler.traceId).toBe(acquire.traceId);
    expect(handler.parentSpanId).toBe(call.spanId);
    const inSink = sinkSpans.filter(childOf(handler));
    expect(inSink.map((span) => span.name)).toEqual(['lock wait', 'decide', 'group commit']);
    const decide = only(inSink, (span) => span.name === 'decide', 'decide');
    expect(decide.attributes).toMatchObject({ 'fencer.decision': 'advanced', 'fencer.fence': token });
    const batch = only(inSink, (span) => span.name === 'group commit', 'group commit');
    expect(batch.attributes).toMatchObject({ 'fencer.batch.joined': true, 'fencer.batch': 1, 'fencer.batch.ops': 1 });
  });

  it("a LeaseStream Acquire from an untraced worker is a trace of its own, L3's steps its children", async () => {
    const { coordinator, coordinatorFile } = await startTraced({ sinkTraced: false });
    const client = coordinatorClient(coordinator.address);
    const messages = new MessageStream<LeaseStreamRequest, LeaseStreamResponse__Output>({
      open: () => client.LeaseStream(new grpc.Metadata()),
      timeoutMs: 10_000,
      keyOfAnswer: (answer) => answer.call_id,
      noun: 'lease call',
    });
    const request = { request_id: fresh('req'), resource: fresh('streamed'), owner_id: 'w1', incarnation: '1' };
    // No trace context: the worker does not trace.
    const answer = await messages.send('1', { call_id: '1', acquire: { ...request, ttl_ms: '5000' } });
    expect(answer.acquired?.lease?.token).toBe('1');
    messages.end();
    client.close();

    const spans = await spansAfterStop<SpanLine>(coordinator, coordinatorFile);
    const acquire = only(spans, (span) => span.name === 'LeaseStream Acquire', 'the message span');
    expect(acquire.kind).toBe('SERVER');
    expect(acquire.parentSpanId).toBeUndefined();
    // The stream itself makes no span, and no step is a root of its own.
    expect(spans.filter((span) => span.parentSpanId === undefined)).toEqual([acquire]);
    expect(spans.filter(childOf(acquire)).map((span) => span.name)).toEqual(
      expect.arrayContaining(['reserve token', 'advance fence', 'record grant']),
    );
  });

  it('a Write is traced over OTLP when only OTEL_* asks, and nothing is traced when nothing asks', async () => {
    const received: unknown[] = [];
    const collector: Server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ path: request.url, body: JSON.parse(body) as unknown });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => collector.close());
    const { port } = collector.address() as { port: number };
    const dir = tempDir();
    cleanups.push(() => dir.remove());

    const otlp = {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'sink-under-test',
    };
    for (const [name, env] of [
      ['traced', otlp],
      ['untraced', {}],
    ] as const) {
      const sink = await start(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir.path, name)], env);
      const calls = sinkCalls(sink.address);
      const resource = fresh('otlp');
      await calls.advance({ resource, token: '1', grant_id: fresh('grant') });
      await calls.write({ resource, token: '1', result_id: fresh('result'), payload: Buffer.from('x') });
      calls.close();
      running.splice(running.indexOf(sink), 1);
      await stopFencer(sink);
    }

    const text = JSON.stringify(received);
    expect(received.map((export_) => (export_ as { path: string }).path)).toEqual(
      expect.arrayContaining(['/v1/traces']),
    );
    expect(text).toContain('sink-under-test');
    expect(text).toContain('fencing.v1.Sink/Write');
    expect(text).toContain('group commit');
    // Only the traced sink exported: every span names the service that asked.
    const services = [...text.matchAll(/"service\.name","value":\{"stringValue":"([^"]+)"/g)].map((match) => match[1]);
    expect(new Set(services)).toEqual(new Set(['sink-under-test']));
  });
});
