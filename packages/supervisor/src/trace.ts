// `fencer trace`: reads the span files that `--trace-file` writes (one per
// process) and prints each trace as a tree across the processes, for people
// without a collector to look at them in.
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { markdownTable } from '@fencer/common';
import { positiveInteger } from '@fencer/cli-kit';
import type { SpanLine } from '@fencer/server-kit';

/** The spans of `files`, every line checked; throws naming the file and line of a bad one. */
export function readSpanFiles(files: readonly string[]): SpanLine[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, index) => {
        if (line.trim() === '') return [];
        let span: Partial<SpanLine>;
        try {
          span = JSON.parse(line) as Partial<SpanLine>;
        } catch {
          span = {};
        }
        if (typeof span.spanId !== 'string' || typeof span.traceId !== 'string' || typeof span.name !== 'string')
          throw new Error(`${file}:${index + 1}: not a span line (written by --trace-file)`);
        return [span as SpanLine];
      }),
  );
}

const fencerAttributes = (span: SpanLine) =>
  Object.entries(span.attributes)
    .filter(([key]) => key.startsWith('fencer.'))
    .map(([key, value]) => `${key.slice('fencer.'.length)}=${String(value)}`)
    .join(' ');

/**
 * Each trace as lines: one span per line, children indented under their
 * parent in start order, with its process, its start relative to the
 * trace's root, its duration and Fencer's own attributes. A span whose
 * parent is not in `spans` (a file left out) is shown as a root.
 */
export function traceTrees(spans: readonly SpanLine[]): string[][] {
  const ids = new Set(spans.map((span) => span.spanId));
  const children = new Map<string, SpanLine[]>();
  for (const span of spans) {
    const parent = span.parentSpanId !== undefined && ids.has(span.parentSpanId) ? span.parentSpanId : '';
    const key = `${span.traceId}/${parent}`;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const byStart = (list: readonly SpanLine[]) => [...list].sort((a, b) => a.startUs - b.startUs);
  const roots = byStart(spans.filter((span) => !ids.has(span.parentSpanId ?? '')));
  return roots.map((root) => {
    const lines: string[] = [];
    const visit = (span: SpanLine, depth: number) => {
      const name = `${'  '.repeat(depth)}${span.name}`.padEnd(48);
      const at = `+${((span.startUs - root.startUs) / 1000).toFixed(2)} ms`.padStart(12);
      const took = `${(span.durationUs / 1000).toFixed(2)} ms`.padStart(10);
      lines.push(`${name} ${span.service.padEnd(19)}${at}${took}  ${fencerAttributes(span)}`.trimEnd());
      for (const child of byStart(children.get(`${span.traceId}/${span.spanId}`) ?? [])) visit(child, depth + 1);
    };
    visit(root, 0);
    return lines;
  });
}

/** The median and 99th percentile of `values`, nearest rank. */
function percentiles(values: readonly number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99) };
}

/**
 * Where the time of the traces whose root span's name contains `name` goes:
 * one row per span name and process under such roots (the root's own row
 * first), in the order they start, with how many there were and their
 * median and 99th-percentile durations.
 */
export function traceSummary(spans: readonly SpanLine[], name: string | undefined): string[][] {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  /** The span's root and how deep under it the span sits. */
  const rootOf = (span: SpanLine): { root: SpanLine; depth: number } => {
    let at = span;
    let depth = 0;
    for (let parent = byId.get(at.parentSpanId ?? ''); parent !== undefined; parent = byId.get(at.parentSpanId ?? '')) {
      at = parent;
      depth += 1;
    }
    return { root: at, depth };
  };
  const rows = new Map<
    string,
    { service: string; name: string; depth: number; durations: number[]; offsets: number[] }
  >();
  for (const span of spans) {
    const { root, depth } = rootOf(span);
    if (name !== undefined && !root.name.includes(name)) continue;
    const key = `${span.service}\u0000${span.name}\u0000${span.kind}`;
    const row = rows.get(key) ?? { service: span.service, name: span.name, depth, durations: [], offsets: [] };
    row.durations.push(span.durationUs);
    row.offsets.push(span === root ? -1 : span.startUs - root.startUs);
    rows.set(key, row);
  }
  return (
    [...rows.values()]
      .map((row) => ({ ...row, at: percentiles(row.offsets).p50, ...percentiles(row.durations) }))
      // Starts are whole milliseconds: a parent and its first child often tie.
      .sort((a, b) => a.at - b.at || a.depth - b.depth)
      .map((row) => [
        `${'  '.repeat(row.depth)}${row.name}`,
        row.service,
        String(row.durations.length),
        (row.p50 / 1000).toFixed(3),
        (row.p99 / 1000).toFixed(3),
      ])
  );
}

export function traceCommand(): Command {
  return new Command('trace')
    .description('print the traces in span files written by --trace-file (one per process) as trees')
    .argument('<file...>', "span files, e.g. the coordinator's and the sink's")
    .addOption(new Option('--name <text>', "only traces whose first span's name contains this (e.g. Acquire)"))
    .addOption(new Option('--last <n>', 'only the last n traces').argParser(positiveInteger))
    .addOption(
      new Option(
        '--summary',
        'instead of trees: per span, how many and their p50 and p99 durations (a Markdown table)',
      ),
    )
    .action((files: string[], options: { name?: string; last?: number; summary?: boolean }) => {
      let spans: SpanLine[];
      try {
        spans = readSpanFiles(files);
      } catch (error) {
        process.stderr.write(`fencer trace: ${(error as Error).message}\n`);
        process.exitCode = 1;
        return;
      }
      if (options.summary) {
        const rows = traceSummary(spans, options.name);
        process.stdout.write(
          markdownTable(['span', 'process', 'count', 'p50 ms', 'p99 ms'], rows, [false, false, true, true, true]) +
            '\n',
        );
        return;
      }
      let trees = traceTrees(spans).filter((lines) => options.name === undefined || lines[0]!.includes(options.name));
      if (options.last !== undefined) trees = trees.slice(-options.last);
      process.stdout.write(trees.map((lines) => lines.join('\n') + '\n').join('\n'));
    });
}
