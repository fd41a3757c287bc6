// `--trace-file`: spans as JSON lines, for people without a collector, and
// the record type that tests and tools read back.
import { appendFile } from 'node:fs/promises';
import type { Attributes } from '@opentelemetry/api';
import { ExportResultCode, hrTimeToMicroseconds, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** One exported span, as `--trace-file` writes it: one JSON object per line. */
export interface SpanLine {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  /** Absent for a root span. */
  readonly parentSpanId?: string;
  readonly name: string;
  /** SERVER, CLIENT or INTERNAL. */
  readonly kind: string;
  /** Microseconds since the Unix epoch. */
  readonly startUs: number;
  readonly durationUs: number;
  readonly attributes: Attributes;
  /** OpenTelemetry's status code: 0 unset, 1 ok, 2 error. */
  readonly status: number;
}

const KIND_NAMES = ['INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];

/** A SpanLine of `span`. */
export function spanLine(span: ReadableSpan): SpanLine {
  const parent = span.parentSpanContext?.spanId;
  return {
    service: String(span.resource.attributes['service.name']),
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    ...(parent === undefined ? {} : { parentSpanId: parent }),
    name: span.name,
    kind: KIND_NAMES[span.kind] ?? String(span.kind),
    startUs: hrTimeToMicroseconds(span.startTime),
    durationUs: hrTimeToMicroseconds(span.duration),
    attributes: span.attributes,
    status: span.status.code,
  };
}

/** Appends each span to a file as a JSON line, for people without a collector. */
export class JsonLinesSpanExporter implements SpanExporter {
  constructor(private readonly file: string) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const text = spans.map((span) => JSON.stringify(spanLine(span)) + '\n').join('');
    appendFile(this.file, text).then(
      () => done({ code: ExportResultCode.SUCCESS }),
      (error: unknown) => done({ code: ExportResultCode.FAILED, error: error as Error }),
    );
  }

  async shutdown(): Promise<void> {}
}
