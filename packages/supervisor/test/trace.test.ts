// `fencer trace`: span files from two processes joined into one tree per
// trace; a file that is not a span file is refused naming its line.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SpanLine } from '@fencer/server-kit';
import { runFencer, tempDir } from '@fencer/testkit';
import { readSpanFiles, traceSummary, traceTrees } from '../src/trace.js';

const span = (service: string, spanId: string, parentSpanId: string | undefined, name: string, startUs: number) => ({
  service,
  traceId: 't1',
  spanId,
  ...(parentSpanId === undefined ? {} : { parentSpanId }),
  name,
  kind: 'INTERNAL',
  startUs,
  durationUs: 500,
  attributes: { 'fencer.decision': 'advanced', 'rpc.system': 'grpc' },
  status: 0,
});

function files(dir: string, spans: Record<string, SpanLine[]>): string[] {
  return Object.entries(spans).map(([name, lines]) => {
    const file = join(dir, name);
    writeFileSync(file, lines.map((line) => JSON.stringify(line) + '\n').join(''));
    return file;
  });
}

describe('fencer trace', () => {
  it("joins the processes' files into one tree, children in start order, with Fencer's attributes", () => {
    const dir = tempDir();
    try {
      const paths = files(dir.path, {
        'coordinator.jsonl': [
          span('fencer-coordinator', 'b', 'a', 'record grant', 3_000),
          span('fencer-coordinator', 'a', undefined, 'Acquire', 1_000),
          span('fencer-coordinator', 'c', 'a', 'advance fence', 1_500),
        ],
        'sink.jsonl': [span('fencer-sink', 'd', 'c', 'AdvanceFence', 2_000)],
      });
      const [tree, ...others] = traceTrees(readSpanFiles(paths));
      expect(others).toEqual([]);
      expect(tree!.map((line) => line.trim().replace(/\s+/g, ' '))).toEqual([
        'Acquire fencer-coordinator +0.00 ms 0.50 ms decision=advanced',
        'advance fence fencer-coordinator +0.50 ms 0.50 ms decision=advanced',
        'AdvanceFence fencer-sink +1.00 ms 0.50 ms decision=advanced',
        'record grant fencer-coordinator +2.00 ms 0.50 ms decision=advanced',
      ]);
      // Indentation is what shows the parent.
      expect(tree!.map((line) => line.length - line.trimStart().length)).toEqual([0, 2, 4, 2]);
    } finally {
      dir.remove();
    }
  });

  it('--summary: per span under the chosen roots, how many and their median and p99, parents before children', () => {
    const trace = (id: string, at: number, advanceUs: number) => [
      { ...span('c', `${id}a`, undefined, 'Acquire', at), traceId: id },
      { ...span('c', `${id}b`, `${id}a`, 'advance fence', at), traceId: id, durationUs: advanceUs },
      { ...span('c', `${id}r`, undefined, 'Release', at + 5_000), traceId: `${id}-release` },
    ];
    const rows = traceSummary(
      [...trace('t1', 0, 100), ...trace('t2', 10_000, 300), ...trace('t3', 20_000, 200)],
      'Acquire',
    );
    expect(rows).toEqual([
      ['Acquire', 'c', '3', '0.500', '0.500'],
      ['  advance fence', 'c', '3', '0.200', '0.300'],
    ]);
  });

  it('refuses a file that is not a span file, naming it and the line, with exit 1', async () => {
    const dir = tempDir();
    try {
      const [good, bad] = files(dir.path, { 'good.jsonl': [span('s', 'a', undefined, 'x', 0)], 'bad.jsonl': [] });
      writeFileSync(bad!, '\n{"level":30,"msg":"a log line"}\n');
      const result = await runFencer(['trace', good!, bad!]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`fencer trace: ${bad}:2: not a span line (written by --trace-file)\n`);
      expect(result.stdout).toBe('');
    } finally {
      dir.remove();
    }
  });
});
