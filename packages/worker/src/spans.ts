// A traced worker's own spans (`fencer worker --trace-file`): each step a
// span, each loop round a `task` span above its steps, so the calls a step
// makes (the LeaseStream messages, the grpc-js instrumentation's unary
// calls) and the coordinator's and the sink's spans of them, across
// processes, are one tree per task. Without tracing started these are the
// OpenTelemetry API's no-ops.
import { trace, type Attributes } from '@opentelemetry/api';
import { endedWith } from '@fencer/proto';

/** Runs `work` as an active span `name` of the worker's trace, a child of the span active now, if any. */
export function inSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  return trace.getTracer('fencer-worker').startActiveSpan(name, { attributes }, (span) => endedWith(span, work));
}
