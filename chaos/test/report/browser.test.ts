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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tempDir } from '@fencer/testkit';
import {
  DEFAULT_WORKLOAD,
  latencySpike,
  loopingWorkerArgs,
  pause,
  Scenario,
  writeReport,
  type Operation,
  type ScenarioVerdict,
} from '../../src/index.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '../../test-artifacts');
// The clock worker events are stamped with (@fencer/worker's eventClockMs), so faults line up with operations.
const nowMs = () => performance.timeOrigin + performance.now();

const dir = tempDir('fencer-report-');
let browser: Browser;
beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`no browser at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  browser = await puppeteer.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless=new'] });
});
afterAll(async () => {
  await browser?.close();
  dir.remove();
});

/** Records a run with a paused holder and a slow sink link, and checks it. */
async function recordRun(): Promise<ScenarioVerdict> {
  const s = await Scenario.start({ name: 'report', data: dir.path, workers: DEFAULT_WORKLOAD.workers });
  try {
    const workers = await Promise.all(
      DEFAULT_WORKLOAD.workers.map((owner, i) =>
        s.worker(owner, loopingWorkerArgs(DEFAULT_WORKLOAD.resources[i % 2]!, DEFAULT_WORKLOAD)),
      ),
    );
    const ops = () => s.operations;
    const okAfter = (method: Operation['method'], process: string | null, afterMs: number) =>
      ops().some(
        (op) =>
          op.method === method &&
          op.outcome.type === 'ok' &&
          op.invokedMs > afterMs &&
          (process === null || op.process === process),
      ) || undefined;

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
    const pausedMs = nowMs();
    const thaw = await s.inject(pause({ pid: workers[0]!.child.pid!, name: 'worker-a' }));
    await eventually(() => okAfter('Acquire', 'worker-c', pausedMs), {
      timeoutMs: 15_000,
      what: 'worker-c to take over',
    });
    await thaw();

    // Replies from the sink to worker-b slower than its call deadline: writes of unknown outcome.
    const slowMs = nowMs();
    const heal = await s.inject(
      latencySpike(workers[1]!.links.sink, {
        latencyMs: DEFAULT_WORKLOAD.callTimeoutMs + 200,
        direction: 'downstream',
      }),
    );
    await eventually(
      () =>
        ops().some((op) => op.method === 'Write' && op.outcome.type === 'unknown' && op.invokedMs > slowMs) ||
        undefined,
      { timeoutMs: 15_000, what: 'a write to time out' },
    );
    await heal();
    const healedMs = nowMs();
    await eventually(() => okAfter('Write', null, healedMs), { timeoutMs: 15_000, what: 'writes to resume' });
    return await s.verdict();
  } finally {
    await s.stop();
  }
}

describe('the report in a browser', () => {
  it('shows every lane, write and fault of a real run, with no console error', { timeout: 90_000 }, async () => {
    const { history, violations } = await recordRun();
    expect(violations).toEqual([]);
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = join(ARTIFACTS, 'report.html');
    await writeReport(file, {
      history,
      violations: [...violations],
      title: 'fencer chaos: paused holder, slow sink',
      seed: 1,
    });
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
