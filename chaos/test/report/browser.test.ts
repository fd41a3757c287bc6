// The report of a real run, opened in headless Chromium: four workers take
// turns on two resources while one holder is paused past its TTL (SIGSTOP)
// and the workers' link to the sink is slowed past their deadline; the
// recorded history is checked, rendered to a file and loaded from disk with
// no server. The page must draw every lane and write visibly, log no error,
// and show a mark's details on hover. The screenshot and the HTML are kept
// in chaos/test-artifacts/ for a person to look at, with the history as JSON.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import puppeteer, { type Browser } from 'puppeteer-core';
import { Toxiproxy } from 'toxiproxy-node-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_PROXY_NAMES, startCluster, type Cluster } from '@fencer/supervisor';
import { eventually, tempDir } from '@fencer/testkit';
import {
  checkHistory,
  DEFAULT_WORKLOAD,
  readFinalState,
  Workload,
  writeReport,
  type FaultPeriod,
  type History,
  type Operation,
} from '../../src/index.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '../../test-artifacts');
// The clock worker events are stamped with (@fencer/worker's eventClockMs), so faults line up with operations.
const nowMs = () => performance.timeOrigin + performance.now();

let dir: ReturnType<typeof tempDir>;
let cluster: Cluster;
let browser: Browser;
beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`no browser at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  dir = tempDir('fencer-report-');
  [cluster, browser] = await Promise.all([
    startCluster({
      data: dir.path,
      sinkListen: '127.0.0.1:0',
      coordinatorListen: '127.0.0.1:0',
      insecure: false,
      stopGraceMs: 5_000,
      workers: DEFAULT_WORKLOAD.workers,
    }),
    puppeteer.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless=new'] }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await cluster?.stop();
  dir?.remove();
});

/** Records a run with a paused holder and a slow sink link, and checks it. */
async function recordRun(): Promise<{ history: History; violations: ReturnType<typeof checkHistory> }> {
  const workload = await Workload.start(cluster, DEFAULT_WORKLOAD);
  const ops = () => workload.operations;
  const okAfter = (method: Operation['method'], process: string | null, afterMs: number) =>
    ops().some(
      (op) =>
        op.method === method &&
        op.outcome.type === 'ok' &&
        op.invokedMs > afterMs &&
        (process === null || op.process === process),
    ) || undefined;
  const faults: FaultPeriod[] = [];

  // Pause worker-a while it holds job-1 (its last call an ok Acquire or Write), until worker-c, its
  // rival on job-1, has been granted it.
  await eventually(
    () => {
      const last = ops()
        .filter((op) => op.process === 'worker-a')
        .at(-1);
      return last?.outcome.type === 'ok' && (last.method === 'Acquire' || last.method === 'Write') ? true : undefined;
    },
    { timeoutMs: 15_000, what: 'worker-a to hold job-1' },
  );
  const pid = workload.pidOf('worker-a');
  const pausedMs = nowMs();
  process.kill(pid, 'SIGSTOP');
  await eventually(() => okAfter('Acquire', 'worker-c', pausedMs), {
    timeoutMs: 15_000,
    what: 'worker-c to take over',
  });
  process.kill(pid, 'SIGCONT');
  faults.push({ name: 'pause', target: 'worker-a', startMs: pausedMs, endMs: nowMs() });

  // Replies from the sink slower than the workers' call deadline: writes of unknown outcome.
  const proxy = await new Toxiproxy(cluster.toxiproxy.url).get(LINK_PROXY_NAMES.workersToSink);
  const slowMs = nowMs();
  const toxic = await proxy.addToxic({
    name: 'slow_sink',
    type: 'latency',
    stream: 'downstream',
    toxicity: 1,
    attributes: { latency: DEFAULT_WORKLOAD.callTimeoutMs + 200, jitter: 0 },
  } as never);
  await eventually(
    () =>
      ops().some((op) => op.method === 'Write' && op.outcome.type === 'unknown' && op.invokedMs > slowMs) || undefined,
    { timeoutMs: 15_000, what: 'a write to time out' },
  );
  await toxic.remove();
  faults.push({ name: 'latency', target: LINK_PROXY_NAMES.workersToSink, startMs: slowMs, endMs: nowMs() });
  const healedMs = nowMs();
  await eventually(() => okAfter('Write', null, healedMs), { timeoutMs: 15_000, what: 'writes to resume' });

  await workload.stop();
  const operations = [...workload.operations];
  const history: History = { operations, final: await readFinalState(cluster, operations), faults };
  return { history, violations: checkHistory(history) };
}

describe('the report in a browser', () => {
  it('shows every lane, write and fault of a real run, with no console error', { timeout: 90_000 }, async () => {
    const { history, violations } = await recordRun();
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = join(ARTIFACTS, 'report.html');
    await writeReport(file, { history, violations, title: 'fencer chaos: paused holder, slow sink', seed: 1 });
    writeFileSync(join(ARTIFACTS, 'history.json'), JSON.stringify(history, null, 1));

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('requestfailed', (request) => errors.push(`request failed: ${request.url()}`));
    await page.setViewport({ width: 1400, height: 900 });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });

    const resources = [...new Set(history.operations.map((op) => String(op.request.resource)))].sort();
    expect(await page.$$eval('[data-lane]', (lanes) => lanes.map((l) => l.getAttribute('data-lane')))).toEqual(
      resources,
    );
    const writes = history.operations.filter((op) => op.method === 'Write');
    // Every write is drawn with a non-empty box, and what is on top at its centre (scrolled into
    // view) is a write's mark: no fault shade or lease covers it, so its hover details are reachable.
    const marks = await page.$$eval('.mark.write', (elements) =>
      elements.map((m) => {
        m.scrollIntoView({ block: 'center', inline: 'center' });
        const box = m.getBoundingClientRect();
        const top = m.ownerDocument.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
        return {
          op: m.getAttribute('data-op'),
          width: box.width,
          height: box.height,
          top: !!top?.closest('.mark.write'),
        };
      }),
    );
    expect(marks.map((m) => m.op)).toEqual(expect.arrayContaining(writes.map((op) => String(op.id))));
    expect(marks).toHaveLength(writes.length);
    expect(marks.filter((m) => !(m.width > 0 && m.height > 0 && m.top))).toEqual([]);
    for (const kind of ['applied', 'unknown']) expect(await page.$$(`.mark.write.${kind}`)).not.toHaveLength(0);
    expect(await page.$$eval('.lease', (leases) => leases.every((l) => l.getBoundingClientRect().width > 0))).toBe(
      true,
    );
    expect(await page.$$eval('.fault', (faults) => faults.map((f) => f.getAttribute('data-fault')))).toEqual([
      'pause',
      'latency',
    ]);
    expect(await page.$eval('.verdict', (v) => v.getAttribute('data-violations'))).toBe(String(violations.length));

    // Hovering a write that timed out under the latency fault shows its details above the timeline.
    const lost = writes.find((op) => op.outcome.type === 'unknown')!;
    await page.hover(`.mark.write[data-op="${lost.id}"]`);
    expect(await page.$eval('#details', (d) => d.textContent)).toMatch(
      /^#\d+ Write by worker-\w · token \d+ · result /,
    );
    await page.$eval('.scroll', (timeline) => timeline.scrollTo(0, 0)); // as a reader first sees it

    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
    expect(errors).toEqual([]);
  });
});
