// The trace context a stream message carries in its `trace_context` field
// (AdvanceFenceStreamRequest, LeaseStreamRequest): what a unary call carries
// in its metadata, where the grpc-js instrumentation puts it. A stream as old
// as its process makes no span of its own, so each message is a CLIENT span
// of the caller's trace. The sender side lives here, with the stream
// helpers every client uses (the coordinator towards its sinks, the worker
// library towards its coordinator); the receiving side is server-kit's.
//
// Only the OpenTelemetry API is used: in a process that registered no SDK
// every call below is a no-op, and a caller with no active span sends an
// empty carrier.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';

/**
 * Sends one message of a stream as a CLIENT span `name` of the active trace,
 * handing `send` the W3C trace context to carry in the message. With no span
 * active (not tracing, or outside any span) `send` gets an empty carrier and
 * nothing is recorded.
 */
export function messageSpan<T>(name: string, send: (carrier: Record<string, string>) => Promise<T>): Promise<T> {
  if (trace.getActiveSpan() === undefined) return send({});
  return trace.getTracer('fencer').startActiveSpan(name, { kind: SpanKind.CLIENT }, (span) => {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return endedWith(span, () => send(carrier));
  });
}

/** Runs `work` and ends `span` with its outcome: an exception and ERROR status when it throws. */
export async function endedWith<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}
