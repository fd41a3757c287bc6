// Traced services for tests of traces across processes: each writes its
// spans to a --trace-file of its own, which a test reads once the process
// has stopped (SIGTERM exports what is buffered; a SIGKILL loses it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFencer, stopFencer, type FencerProcess } from './processes.js';

/** A sink and the coordinator in front of it, and the files their spans go to. */
export interface TracedServices {
  readonly sink: FencerProcess;
  /** Where the sink's spans go; written only if it was started traced. */
  readonly sinkFile: string;
  readonly coordinator: FencerProcess;
  readonly coordinatorFile: string;
}

/**
 * Starts an --insecure sink and a coordinator in front of it on free
 * loopback ports, their data and span files under `dir`; the coordinator
 * always traces, the sink only if `sinkTraced`. Whatever started is stopped
 * again if the other fails to start.
 */
export async function startTracedServices(dir: string, options: { sinkTraced: boolean }): Promise<TracedServices> {
  const sinkFile = join(dir, 'sink.jsonl');
  const coordinatorFile = join(dir, 'coordinator.jsonl');
  const sink = await startFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir, 'sink')], {
    env: options.sinkTraced ? { FENCER_SINK_TRACE_FILE: sinkFile } : {},
  });
  try {
    const coordinator = await startFencer([
      'coordinator',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--data',
      join(dir, 'coordinator'),
      '--sink',
      sink.address,
      '--trace-file',
      coordinatorFile,
    ]);
    return { sink, sinkFile, coordinator, coordinatorFile };
  } catch (error) {
    await stopFencer(sink);
    throw error;
  }
}

/**
 * Stops `child` with SIGTERM, which exports the spans it still buffers (a
 * SIGKILL loses them), and reads its --trace-file; stopping it again later
 * does nothing.
 */
export async function spansAfterStop<T>(child: FencerProcess, file: string): Promise<T[]> {
  await stopFencer(child);
  return readTraceFile<T>(file);
}

/** The spans in a --trace-file, one JSON object per line, as `T` (server-kit's SpanLine). */
export function readTraceFile<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}
