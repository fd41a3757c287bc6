// The chaos run's report: one self-contained HTML file (inline CSS, SVG and
// a few lines of script; nothing is fetched) that draws a history on a
// timeline — a lane per resource with its leases and writes, the faults
// shaded across every lane, the operations the checker cites ringed in red,
// the lock model's first violating operation flagged above its ring — so a
// failed run can be read in any browser, from a CI artifact, offline.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { History, Operation } from '../checker/history.js';
import { EMPTY_LEASE, callOf, callsOf, writesOf, type Call } from '../checker/records.js';
import type { Unchecked, Violation } from '../checker/round.js';

/** What a report shows: the history, what the checker found in it, and how the run was made. */
export interface ReportInput {
  readonly history: History;
  readonly violations: readonly Violation[];
  /** What the checker could not judge; with no violation, the verdict is UNKNOWN rather than SAFE. */
  readonly unchecked?: readonly Unchecked[];
  readonly title: string;
  readonly seed?: number;
  /** The clock uncertainty the check assumed (ms), shown in the header. */
  readonly clockUncertaintyMs?: number;
  /** Extra facts for the header (duration, workload, commit), shown as given. */
  readonly meta?: Readonly<Record<string, string>>;
}

/** A lease as the history shows it, on the shared clock (ms). */
interface LeaseSpan {
  readonly op: Operation;
  readonly resource: string;
  readonly holder: string;
  readonly token: string;
  readonly startMs: number;
  /** The lease's TTL as last granted or renewed. */
  ttlMs: number;
  /** When the holder's lease ran out at the latest, unless renewed: its last grant or renewal's completion + TTL. */
  validUntilMs: number;
  endMs: number;
  end: 'released' | 'superseded' | 'lost' | 'open';
}

/** A token as the report shows it: '' when the call carried none (0n, V2). */
const tokenText = (token: bigint) => (token ? String(token) : '');

const esc = (value: string | number): string =>
  String(value).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

// Renew refusals by which the coordinator tells a holder its lease is gone (L4).
const LOST = new Set(['LEASE_EXPIRED', 'NOT_LEASE_HOLDER']);

/**
 * Leases derived from Acquire, Renew and Release: each starts when an ok
 * Acquire is answered and ends at the holder's ok Release, at a Renew
 * refused as lost, at the next grant of the resource, or at the end of the
 * history. A replayed grant (R1) continues the lease it repeats.
 */
function leaseSpans(calls: readonly Call[], historyEndMs: number): LeaseSpan[] {
  const spans: LeaseSpan[] = [];
  const open = new Map<string, LeaseSpan>(); // resource + holder → its lease
  const close = (span: LeaseSpan, atMs: number, end: LeaseSpan['end']) => {
    span.endMs = Math.max(span.startMs, atMs);
    span.end = end;
    open.delete(`${span.resource}\n${span.holder}`);
  };
  const byCompletion = [...calls].sort((a, b) => a.op.completedMs - b.op.completedMs || a.op.id - b.op.id);
  for (const call of byCompletion) {
    const { op, resource } = call;
    const lease = call.answer?.lease ?? EMPTY_LEASE;
    const holder = op.method === 'Acquire' ? lease.holder : call.holder;
    const span = open.get(`${resource}\n${holder}`);
    const ttlMs = lease.ttlMs || call.ttlMs;
    // Renew and Release name the token in the request; an Acquire learns it from the answer.
    const current = span && span.token === tokenText(call.token || lease.token) ? span : undefined;
    if (op.method === 'Acquire' && op.outcome.type === 'ok' && !current) {
      for (const other of open.values()) if (other.resource === resource) close(other, op.completedMs, 'superseded');
      const started: LeaseSpan = {
        op,
        resource,
        holder,
        token: tokenText(lease.token),
        startMs: op.completedMs,
        ttlMs,
        validUntilMs: op.completedMs + ttlMs,
        endMs: historyEndMs,
        end: 'open',
      };
      spans.push(started);
      open.set(`${resource}\n${holder}`, started);
    } else if (current && op.method === 'Renew') {
      if (op.outcome.type === 'ok') {
        current.ttlMs = ttlMs || current.ttlMs; // a Renew's zero TTL keeps the lease's own (L4)
        current.validUntilMs = op.completedMs + current.ttlMs;
      } else if (LOST.has(call.reason)) close(current, op.completedMs, 'lost');
    } else if (current && op.method === 'Release' && op.outcome.type === 'ok') {
      close(current, op.completedMs, 'released');
    }
  }
  return spans;
}

/** The class of a write's mark: how it ended. */
function writeKind({ op, answer }: Call): 'applied' | 'replayed' | 'refused' | 'unknown' {
  if (op.outcome.type === 'fail') return 'refused';
  if (op.outcome.type === 'unknown') return 'unknown';
  return answer?.outcome === 'REPLAYED' ? 'replayed' : 'applied';
}

// Owner colours (Tableau 10 without its red, which marks violations).
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
// Refusals the sink gives a Write (F1, F3, A5) each get a colour; any other reason is grey.
const REASON_COLOURS: Readonly<Record<string, string>> = {
  STALE_TOKEN: '#e8590c',
  TOKEN_NOT_ISSUED: '#795548',
  RESULT_CONFLICT: '#8e24aa',
  OWNER_MISMATCH: '#c2185b',
};
const reasonColour = (reason: string) => REASON_COLOURS[reason] ?? '#616161';

/** A write's glyph, centred on (x, y). */
function glyph(kind: ReturnType<typeof writeKind> | 'op', x: number, y: number, reason = ''): string {
  switch (kind) {
    case 'applied':
      return `<circle cx="${x}" cy="${y}" r="4" fill="#2b8a3e"/>`;
    case 'replayed':
      return `<circle cx="${x}" cy="${y}" r="3.5" fill="#fff" stroke="#2b8a3e" stroke-width="2"/>`;
    case 'refused':
      return `<path d="M${x - 4} ${y - 4}L${x + 4} ${y + 4}M${x - 4} ${y + 4}L${x + 4} ${y - 4}" stroke="${reasonColour(reason)}" stroke-width="2.5"/>`;
    case 'unknown':
      return `<path d="M${x} ${y - 5}L${x + 5} ${y}L${x} ${y + 5}L${x - 5} ${y}Z" fill="#fff" stroke="#1c7ed6" stroke-width="1.5"/>`;
    case 'op':
      return `<rect x="${x - 1.5}" y="${y - 5}" width="3" height="10" fill="#495057"/>`;
  }
}

/** The lock model's mark of its first violating operation: a red triangle pointing down at (x, y). */
const firstFlag = (x: number, y: number) =>
  `<path class="first-flag" d="M${x - 6} ${y - 9}h12l-6 9z" fill="#e03131" stroke="#fff" stroke-width="1"/>`;

/** One line about an operation: what the hover title and the details line show. */
function detailsOf({ op, token, resultId, answer }: Call, t0: number, rules: readonly string[]): string {
  const outcome =
    op.outcome.type === 'ok'
      ? `ok ${answer?.outcome ?? ''}`.trim() + (answer?.fence !== undefined ? ` (fence ${answer.fence})` : '')
      : `${op.outcome.type} ${op.outcome.code} ${op.outcome.reason}`.trim();
  const parts = [
    `#${op.id} ${op.method} by ${op.process}`,
    `token ${tokenText(token || (answer?.lease.token ?? 0n)) || '-'}`,
    ...(op.method === 'Write' || op.method === 'Read' ? [`result ${resultId}`] : []),
    outcome,
    `sent ${Math.round(op.invokedMs - t0)} ms, done ${Math.round(op.completedMs - t0)} ms`,
    ...(rules.length ? [`violates ${rules.join(', ')}`] : []),
  ];
  return parts.join(' · ');
}

/** Packs intervals into as few rows as keep each row's intervals apart; returns each one's row and the row count. */
function pack(intervals: readonly { startMs: number; endMs: number }[]): { rows: number[]; count: number } {
  const ends: number[] = [];
  const rows = intervals.map(({ startMs, endMs }) => {
    const row = ends.findIndex((end) => end <= startMs);
    const chosen = row === -1 ? ends.length : row;
    ends[chosen] = endMs;
    return chosen;
  });
  return { rows, count: ends.length };
}

/** A round tick step (1, 2 or 5 × 10^k ms) giving about ten ticks. */
function tickStep(durationMs: number): number {
  const rough = durationMs / 10;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? 10 * power;
}

/**
 * Past this many operations the timeline draws one by one only the
 * operations around violations and fault edges, up to this many, and counts
 * the rest per slice: a long run's report stays a few megabytes and
 * readable, where drawing every call would be hundreds of megabytes of marks
 * a pixel apart.
 */
export const DETAIL_LIMIT = 3_000;
// How close (ms) to a cited operation or a fault's start or end an operation is drawn on its own.
const CONTEXT_MS = 1_000;
const SLICE_PX = 12; // px per slice of the counted operations

/**
 * The ids of the operations drawn one by one: all of them up to
 * DETAIL_LIMIT; past it, those violations cite, then the nearest to them,
 * then those nearest a fault's start or end, DETAIL_LIMIT in all.
 */
function detailed(input: ReportInput): Set<number> {
  const { operations, faults } = input.history;
  if (operations.length <= DETAIL_LIMIT) return new Set(operations.map((op) => op.id));
  const cited = new Set([...input.violations, ...(input.unchecked ?? [])].flatMap((v) => v.operations ?? []));
  const ascending = (times: number[]) => times.sort((a, b) => a - b);
  const citedMs = ascending(operations.filter((op) => cited.has(op.id)).map((op) => op.invokedMs));
  const edgesMs = ascending(faults.flatMap((f) => (f.endMs === undefined ? [f.startMs] : [f.startMs, f.endMs])));
  // Binary search: a long run has thousands of fault edges and a hundred thousand operations.
  const distance = (op: Operation, times: readonly number[]) => {
    let [low, high] = [0, times.length];
    while (low < high) {
      const mid = (low + high) >> 1;
      if (times[mid]! < op.invokedMs) low = mid + 1;
      else high = mid;
    }
    return Math.min(
      Math.abs((times[low] ?? Infinity) - op.invokedMs),
      Math.abs(op.invokedMs - (times[low - 1] ?? -Infinity)),
    );
  };
  // Ranked: cited first, then within CONTEXT_MS of a cited operation, then of a fault edge, nearest first.
  const rank = (op: Operation): number => {
    if (cited.has(op.id)) return 0;
    const nearCited = distance(op, citedMs);
    if (nearCited <= CONTEXT_MS) return 1 + nearCited / CONTEXT_MS;
    const nearEdge = distance(op, edgesMs);
    return nearEdge <= CONTEXT_MS ? 3 + nearEdge / CONTEXT_MS : Infinity;
  };
  const ranked = operations.map((op) => ({ id: op.id, rank: rank(op) })).filter((r) => r.rank < Infinity);
  ranked.sort((a, b) => a.rank - b.rank);
  return new Set([...cited, ...ranked.slice(0, DETAIL_LIMIT).map((r) => r.id)]);
}

/** The counts of one process's calls, not drawn one by one, in one slice of a lane. */
interface Bucket {
  applied: number;
  replayed: number;
  refused: number;
  unknown: number;
  other: number;
}
const BUCKET_COLOURS: Readonly<Record<keyof Bucket, string>> = {
  applied: '#2b8a3e',
  replayed: '#8ce99a',
  refused: '#e8590c',
  unknown: '#1c7ed6',
  other: '#adb5bd',
};

const GUTTER = 140; // px for lane and process names
const ROW = 20; // px per lease row and fault row
const MARK_ROW = 14; // px per process row of write marks
const LANE_GAP = 14;

// Roughly how wide a character of the 11 px labels is.
const CHAR_PX = 6.5;

/**
 * The first label that fits within the band [x1, x2], or none: a long run's
 * faults are a few pixels wide, and labels running over the next bands made
 * the fault lane illegible (its title still names each on hover).
 */
function bandLabel(labels: readonly string[], x1: number, x2: number, top: number): string {
  const label = labels.find((l) => l.length * CHAR_PX + 6 <= x2 - x1);
  return label === undefined ? '' : `<text x="${x1 + 3}" y="${top + 12}">${esc(label)}</text>`;
}

/** The timeline SVG and the counts the header shows. */
function timeline(input: ReportInput): { svg: string; leases: number; drawn: number } {
  const { operations, faults } = input.history;
  // Folds, not Math.min(...xs): a long run's history is past the arguments a call may take.
  const starts = operations.length ? operations.map((op) => op.invokedMs) : faults.map((f) => f.startMs);
  const start = starts.length ? starts.reduce((a, b) => Math.min(a, b)) : 0;
  const tEnd = [...operations.map((op) => op.completedMs), ...faults.map((f) => f.endMs ?? f.startMs)].reduce(
    (a, b) => Math.max(a, b),
    start,
  );
  const durationMs = Math.max(tEnd - start, 1);
  const plotWidth = Math.min(Math.max(durationMs / 10, 900), 12_000);
  const x = (ms: number) => +(GUTTER + (Math.max(ms - start, 0) / durationMs) * plotWidth).toFixed(1);
  const colourOf = new Map(
    [...new Set(operations.map((op) => op.process))].sort().map((p, i) => [p, PALETTE[i % PALETTE.length]!]),
  );
  const rulesOf = new Map<number, string[]>();
  const firsts = new Set<number>();
  for (const v of input.violations) {
    for (const id of v.operations ?? []) {
      const rule = v.first === id ? `${v.rule} (its first violating operation)` : v.rule;
      rulesOf.set(id, [...(rulesOf.get(id) ?? []), rule]);
    }
    if (v.first !== undefined) firsts.add(v.first);
  }
  const cited = (op: Operation) => (rulesOf.has(op.id) ? ' cited' : '') + (firsts.has(op.id) ? ' first' : '');
  const ring = (op: Operation, cx: number, cy: number) =>
    (rulesOf.has(op.id)
      ? `<circle class="ring" cx="${cx}" cy="${cy}" r="8" fill="none" stroke="#e03131" stroke-width="2.5"/>`
      : '') + (firsts.has(op.id) ? firstFlag(cx, cy - 10) : '');
  const out: string[] = [];
  const kept = detailed(input);
  const slices = Math.max(1, Math.ceil(plotWidth / SLICE_PX));
  const sliceOf = (ms: number) => Math.min(slices - 1, Math.floor(((ms - start) / durationMs) * slices));
  const sliceStartMs = (i: number) => start + (i * durationMs) / slices;

  const faultRows = pack(faults.map((f) => ({ startMs: f.startMs, endMs: f.endMs ?? tEnd })));
  const axisY = faultRows.count * ROW + 4;
  const lanesTop = axisY + 22;
  const calls = callsOf(operations);
  const spans = leaseSpans(calls, tEnd);
  const resources = [...new Set(calls.map((c) => c.resource))].sort();
  let y = lanesTop;
  for (const resource of resources) {
    const allSpans = spans.filter((s) => s.resource === resource);
    const laneSpans = allSpans.filter((s) => kept.has(s.op.id));
    const laneCalls = calls.filter((c) => c.resource === resource);
    const processes = [...new Set(laneCalls.map((c) => c.op.process))].sort();
    // Leases not drawn one by one: per slice, who held the lease longest in it, and for how much of it.
    const held = new Map<number, Map<string, number>>();
    for (const span of allSpans.filter((s) => !kept.has(s.op.id))) {
      for (let i = sliceOf(span.startMs); i <= sliceOf(span.endMs); i++) {
        const overlapMs = Math.min(span.endMs, sliceStartMs(i + 1)) - Math.max(span.startMs, sliceStartMs(i));
        const slice = held.get(i) ?? held.set(i, new Map()).get(i)!;
        slice.set(span.op.process, (slice.get(span.op.process) ?? 0) + Math.max(overlapMs, 0));
      }
    }
    const heldTop = y;
    const spansTop = y + (held.size > 0 ? ROW : 0);
    const spanRows = pack(laneSpans);
    const marksTop = spansTop + Math.max(spanRows.count, held.size > 0 ? 0 : 1) * ROW;
    const height = marksTop - y + processes.length * MARK_ROW + 6;
    out.push(`<g class="lane" data-lane="${esc(resource)}">`);
    out.push(`<rect class="lane-bg" x="0" y="${y}" width="${GUTTER + plotWidth + 10}" height="${height}"/>`);
    out.push(`<text class="lane-name" x="6" y="${y + 14}">${esc(resource)}</text>`);
    for (const [i, byHolder] of held) {
      const [holder, heldMs] = [...byHolder].reduce((a, b) => (b[1] > a[1] ? b : a));
      const share = Math.min(heldMs / (durationMs / slices), 1);
      const from = Math.round(sliceStartMs(i) - start);
      out.push(
        `<g class="held" data-slice="${i}" data-owner="${esc(holder)}"><title>${esc(`${resource} ${from}–${Math.round(sliceStartMs(i + 1) - start)} ms: held mostly by ${holder} (${Math.round(share * 100)}% of the slice)`)}</title>` +
          `<rect x="${x(sliceStartMs(i))}" y="${heldTop + 3}" width="${Math.max(x(sliceStartMs(i + 1)) - x(sliceStartMs(i)), 1)}" height="${ROW - 6}" fill="${colourOf.get(holder) ?? '#888'}" opacity="${(0.25 + 0.75 * share).toFixed(2)}"/></g>`,
      );
    }
    laneSpans.forEach((s, i) => {
      const top = spansTop + spanRows.rows[i]! * ROW + 3;
      const [x1, x2, xv] = [x(s.startMs), x(s.endMs), x(Math.min(s.validUntilMs, s.endMs))];
      const colour = colourOf.get(s.op.process) ?? '#888';
      const label = x2 - x1 >= 56 ? `token ${s.token}` : s.token;
      const title = `${s.holder} holds token ${s.token} of ${resource} from ${Math.round(s.startMs - start)} ms (${detailsOf(callOf(s.op), start, rulesOf.get(s.op.id) ?? [])}); ends ${s.end} at ${Math.round(s.endMs - start)} ms`;
      out.push(
        `<g class="lease${cited(s.op)}" data-op="${s.op.id}" data-token="${esc(s.token)}" data-owner="${esc(s.op.process)}" data-end="${s.end}"><title>${esc(title)}</title>` +
          `<rect x="${x1}" y="${top}" width="${Math.max(xv - x1, 1)}" height="${ROW - 6}" rx="3" fill="${colour}"/>` +
          (x2 > xv
            ? `<rect class="expired" x="${xv}" y="${top}" width="${x2 - xv}" height="${ROW - 6}" fill="${colour}" opacity="0.45"/><rect x="${xv}" y="${top}" width="${x2 - xv}" height="${ROW - 6}" fill="url(#hatch)"/>`
            : '') +
          `<text x="${x1 + 3}" y="${top + 11}">${esc(label)}</text>${ring(s.op, x1, top + (ROW - 6) / 2)}</g>`,
      );
    });
    processes.forEach((p, i) =>
      out.push(
        `<text class="process-name" x="18" y="${marksTop + i * MARK_ROW + 10}" fill="${colourOf.get(p)}">${esc(p)}</text>`,
      ),
    );
    // Calls not drawn one by one: counted per process and slice, drawn as a bar stacked by outcome.
    const buckets = new Map<string, Bucket>();
    for (const call of laneCalls.filter((c) => !kept.has(c.op.id))) {
      const { op } = call;
      const key = `${processes.indexOf(op.process)} ${sliceOf(op.completedMs)}`;
      const bucket =
        buckets.get(key) ?? buckets.set(key, { applied: 0, replayed: 0, refused: 0, unknown: 0, other: 0 }).get(key)!;
      bucket[op.method === 'Write' ? writeKind(call) : 'other']++;
    }
    const fullest = [...buckets.values()].reduce(
      (most, b) => Math.max(most, b.applied + b.replayed + b.refused + b.unknown + b.other),
      1,
    );
    for (const [key, bucket] of buckets) {
      const [row, i] = key.split(' ').map(Number) as [number, number];
      const [x1, x2] = [x(sliceStartMs(i)), x(sliceStartMs(i + 1))];
      let bottom = marksTop + (row + 1) * MARK_ROW - 1;
      const bars = (Object.keys(BUCKET_COLOURS) as (keyof Bucket)[]).map((kind) => {
        const height = +((bucket[kind] / fullest) * (MARK_ROW - 2)).toFixed(1);
        bottom -= height;
        return bucket[kind]
          ? `<rect x="${x1}" y="${bottom.toFixed(1)}" width="${Math.max(x2 - x1 - 1, 1)}" height="${height}" fill="${BUCKET_COLOURS[kind]}"/>`
          : '';
      });
      const counts = (Object.keys(BUCKET_COLOURS) as (keyof Bucket)[])
        .filter((kind) => bucket[kind] > 0)
        .map((kind) => `${bucket[kind]} ${kind === 'other' ? 'other calls' : `${kind} writes`}`);
      out.push(
        `<g class="bucket" data-process="${esc(processes[row]!)}" data-slice="${i}"><title>${esc(`${processes[row]} on ${resource}, ${Math.round(sliceStartMs(i) - start)}–${Math.round(sliceStartMs(i + 1) - start)} ms: ${counts.join(', ')}`)}</title>${bars.join('')}</g>`,
      );
    }
    const drawn = new Set(laneSpans.map((s) => s.op.id));
    const own = laneCalls.filter((c) => kept.has(c.op.id));
    for (const call of own.filter(({ op }) => op.method === 'Write' || (rulesOf.has(op.id) && !drawn.has(op.id)))) {
      const { op } = call;
      const [cx, cy] = [x(op.completedMs), marksTop + processes.indexOf(op.process) * MARK_ROW + MARK_ROW / 2];
      const kind = op.method === 'Write' ? writeKind(call) : 'op';
      const reason = op.outcome.type === 'ok' ? '' : ` data-reason="${esc(call.reason)}"`;
      const cls = op.method === 'Write' ? `mark write ${kind}` : `mark op ${op.method.toLowerCase()}`;
      out.push(
        `<g class="${cls}${cited(op)}" data-op="${op.id}" data-process="${esc(op.process)}" data-token="${esc(tokenText(call.token))}"${reason}>` +
          `<title>${esc(detailsOf(call, start, rulesOf.get(op.id) ?? []))}</title>${glyph(kind, cx, cy, call.reason)}${ring(op, cx, cy)}</g>`,
      );
    }
    out.push('</g>');
    y += height + LANE_GAP;
  }

  faults.forEach((f, i) => {
    const [x1, x2] = [x(f.startMs), x(f.endMs ?? tEnd)];
    const top = faultRows.rows[i]! * ROW + 2;
    const title = `${f.name} on ${f.target}: ${Math.round(f.startMs - start)}–${f.endMs === undefined ? 'end' : `${Math.round(f.endMs - start)} ms`}`;
    out.push(
      `<g class="fault" data-fault="${esc(f.name)}" data-target="${esc(f.target)}"><title>${esc(title)}</title>` +
        `<rect class="shade" x="${x1}" y="${lanesTop}" width="${Math.max(x2 - x1, 1)}" height="${Math.max(y - lanesTop - LANE_GAP, 0)}"/>` +
        `<rect class="band" x="${x1}" y="${top}" width="${Math.max(x2 - x1, 2)}" height="${ROW - 4}"/>` +
        bandLabel([`${f.name} → ${f.target}`, f.name], x1, x2, top) +
        '</g>',
    );
  });

  const step = tickStep(durationMs);
  const ticks: string[] = [];
  for (let ms = 0; ms <= durationMs; ms += step) {
    const label = step >= 1000 || ms >= 10_000 ? `${+(ms / 1000).toFixed(2)} s` : `${+ms.toFixed(2)} ms`;
    ticks.push(
      `<line x1="${x(start + ms)}" x2="${x(start + ms)}" y1="${axisY + 16}" y2="${y}"/><text x="${x(start + ms)}" y="${axisY + 12}">${label}</text>`,
    );
  }
  const width = GUTTER + plotWidth + 20;
  const svg =
    `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}">` +
    `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#fff" stroke-width="2"/></pattern></defs>` +
    `<text class="lane-name" x="6" y="${axisY + 12}">ms since first op</text>` +
    `<g class="axis">${ticks.join('')}</g>${out.join('')}</svg>`;
  return { svg, leases: spans.length, drawn: kept.size };
}

const CSS = `
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:16px;color:#212529}
h1{font-size:20px;margin:0 0 8px}
.verdict{padding:10px 14px;border-radius:6px;font-weight:600;margin-bottom:10px}
.verdict.safe{background:#d3f9d8;color:#2b8a3e}.verdict.unsafe{background:#ffe3e3;color:#c92a2a}.verdict.unknown{background:#fff3bf;color:#e67700}
.meta,.summary{display:flex;flex-wrap:wrap;gap:4px 18px;margin:6px 0}
.summary div,.meta div{display:flex;gap:6px}dt{color:#868e96}dd{margin:0;font-weight:600}
ol.violations{background:#fff5f5;border:1px solid #ffa8a8;border-radius:6px;padding:8px 8px 8px 34px}
li.violation{cursor:pointer;margin:2px 0}li.violation b{color:#c92a2a}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:8px 0;align-items:center}
.legend span{display:inline-flex;align-items:center;gap:4px}.swatch{width:14px;height:10px;display:inline-block;border-radius:2px}
#details{min-height:1.4em;font-family:ui-monospace,monospace;font-size:12px;color:#495057;margin:4px 0}
.scroll{overflow-x:auto;border:1px solid #dee2e6;border-radius:6px}
svg text{font-size:11px;fill:#212529}.lane-name{font-weight:600}.process-name{font-size:10px}
.lane-bg{fill:#f8f9fa}.axis line{stroke:#dee2e6}.axis text{fill:#868e96;text-anchor:middle}
/* The shade lies over the lanes: it must not take the hover of the marks under it. */
.fault .shade{fill:#fa5252;opacity:.09;pointer-events:none}.fault .band{fill:#ffc9c9}
.lease text{fill:#fff;font-weight:600;paint-order:stroke;stroke:rgba(0,0,0,.35);stroke-width:2px}
.lease.cited>rect:first-of-type{stroke:#e03131;stroke-width:2.5}
[data-op]{cursor:default}[data-op]:hover{filter:brightness(.8)}
.focus .ring{stroke-width:5}
`;

// Hovering an element shows its details in a line above the timeline (a title tooltip is slow
// and hard to copy); clicking a violation scrolls to the operations it cites.
const SCRIPT = `
const details=document.getElementById('details');
for(const el of document.querySelectorAll('[data-op],.bucket,.held'))el.addEventListener('mouseenter',()=>{details.textContent=el.querySelector('title').textContent;});
for(const li of document.querySelectorAll('li.violation'))li.addEventListener('click',()=>{
for(const el of document.querySelectorAll('.focus'))el.classList.remove('focus');
const els=li.dataset.ops.split(' ').filter(Boolean).flatMap(id=>[...document.querySelectorAll('[data-op="'+id+'"]')]);
for(const el of els)el.classList.add('focus');
if(els[0])els[0].scrollIntoView({block:'center',inline:'center'});});
`;

/** The report as one HTML document; every text from the history is escaped. */
export function renderReport(input: ReportInput): string {
  const { history, violations } = input;
  const { svg, leases, drawn } = timeline(input);
  const writes = writesOf(callsOf(history.operations));
  const kinds = writes.map(writeKind);
  const refusals = new Map<string, number>();
  for (const { reason } of writes.filter((w) => w.op.outcome.type === 'fail'))
    refusals.set(reason, (refusals.get(reason) ?? 0) + 1);
  const counts: [string, string, number][] = [
    ['operations', 'operations', history.operations.length],
    ['leases', 'leases', leases],
    ['writes', 'writes', writes.length],
    ['acked-writes', 'acked writes', kinds.filter((k) => k === 'applied' || k === 'replayed').length],
    ['applied', 'applied', kinds.filter((k) => k === 'applied').length],
    ['replayed', 'replayed', kinds.filter((k) => k === 'replayed').length],
    ['unknown', 'unknown writes', kinds.filter((k) => k === 'unknown').length],
    ...[...refusals]
      .sort()
      .map(([reason, n]): [string, string, number] => [`refused:${reason}`, `refused ${reason}`, n]),
    ['faults', 'faults', history.faults.length],
    ...(drawn < history.operations.length
      ? [
          ['drawn', `drawn one by one (near violations and fault edges; the rest counted per slice)`, drawn] as [
            string,
            string,
            number,
          ],
        ]
      : []),
  ];
  const dl = (entries: [string, string, string | number][], cls: string) =>
    `<dl class="${cls}">${entries.map(([key, label, value]) => `<div data-count="${esc(key)}"><dt>${esc(label)}</dt><dd>${esc(value)}</dd></div>`).join('')}</dl>`;
  const seed = input.seed === undefined ? '' : ` · seed ${input.seed}`;
  const unchecked = input.unchecked ?? [];
  const verdict = violations.length
    ? `<div class="verdict unsafe" data-violations="${violations.length}">UNSAFE: ${violations.length} violation${violations.length === 1 ? '' : 's'}${seed}</div>`
    : unchecked.length
      ? `<div class="verdict unknown" data-violations="0">UNKNOWN: no violation found, but the lock model could not judge all of it${seed}</div>`
      : `<div class="verdict safe" data-violations="0">SAFE: no violation of S1–S6 or the lock model${seed}</div>`;
  const item = (cls: string, v: Violation | Unchecked) =>
    `<li class="${cls}" data-rule="${esc(v.rule)}" data-ops="${esc((v.operations ?? []).join(' '))}"${'first' in v && v.first !== undefined ? ` data-first="${v.first}"` : ''}><b>${esc(v.rule)}</b> ${esc(v.message)}</li>`;
  const list =
    violations.length || unchecked.length
      ? `<ol class="violations">${[...violations.map((v) => item('violation', v)), ...unchecked.map((v) => item('violation unchecked', v))].join('')}</ol>`
      : '';
  const owners = [...new Set(history.operations.map((op) => op.process))].sort();
  const mark = (kind: Parameters<typeof glyph>[0], label: string, reason = '') =>
    `<span><svg width="14" height="14">${glyph(kind, 7, 7, reason)}</svg>${esc(label)}</span>`;
  const legend =
    `<div class="legend">` +
    owners
      .map((o, i) => `<span><i class="swatch" style="background:${PALETTE[i % PALETTE.length]}"></i>${esc(o)}</span>`)
      .join('') +
    `<span><i class="swatch" style="background:repeating-linear-gradient(45deg,#adb5bd 0 3px,#fff 3px 5px)"></i>lease past its TTL, not yet fenced (F5)</span>` +
    `<span><i class="swatch" style="background:#ffc9c9"></i>fault</span></div><div class="legend">` +
    mark('applied', 'applied') +
    mark('replayed', 'replayed') +
    [...new Set(['STALE_TOKEN', 'RESULT_CONFLICT', ...refusals.keys()])]
      .map((r) => mark('refused', `refused ${r}`, r))
      .join('') +
    mark('unknown', 'unknown outcome') +
    (drawn < history.operations.length
      ? `<span><svg width="14" height="14"><rect x="3" y="6" width="8" height="7" fill="${BUCKET_COLOURS.applied}"/><rect x="3" y="2" width="8" height="4" fill="${BUCKET_COLOURS.refused}"/></svg>calls counted per slice, stacked by outcome (applied, replayed, refused, unknown, other calls)</span>`
      : '') +
    `<span><svg width="18" height="18"><circle cx="9" cy="9" r="7" fill="none" stroke="#e03131" stroke-width="2.5"/></svg>cited by a violation</span>` +
    `<span><svg width="14" height="14">${firstFlag(7, 11)}</svg>first violating operation (lock model)</span></div>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(input.title)}</title><style>${CSS}</style></head>
<body><h1>${esc(input.title)}</h1>${verdict}${list}
${dl(
  [
    ...(input.clockUncertaintyMs === undefined
      ? []
      : [
          ['clock-uncertainty', 'clock uncertainty', `${input.clockUncertaintyMs.toFixed(3)} ms`] as [
            string,
            string,
            string,
          ],
        ]),
    ...Object.entries(input.meta ?? {}).map(([k, v]): [string, string, string] => [k, k, v]),
  ],
  'meta',
)}${dl(counts, 'summary')}
${legend}<div id="details">Hover a lease or a mark for its details.</div>
<div class="scroll">${svg}</div>
<script>${SCRIPT}</script></body></html>
`;
}

/** Renders the report and writes it to `path` (its folder is created), replacing any file there. */
export async function writeReport(path: string, input: ReportInput): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, renderReport(input));
}
