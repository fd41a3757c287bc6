// A6 in real server processes: a flood of unauthenticated calls, each with
// kilobytes of headers, leaves the server's memory within a fixed bound,
// whatever their number, while an authenticated caller keeps being answered.
// Without the bound, 60,000 such calls took a sink from ~95 MiB to ~490 MiB
// RSS and a coordinator to ~710 MiB, and it stayed there. The flood is raw HTTP/2 on loopback, bounded in
// count; memory is the server's RSS, read from /proc while the flood runs.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  coordinatorApi,
  coordinatorClient,
  floodCalls,
  ok,
  paddingMetadata,
  sinkCalls,
  startFencer,
  stopFencer,
  tempDir,
} from '@fencer/testkit';

const MiB = 1024 * 1024;
const CALLS = 60_000;
/**
 * What one refused call leaves behind: its headers, as large as they reach
 * the server's code (past --max-metadata-bytes, refused METADATA_TOO_LARGE;
 * HTTP/2 refuses twice that before a call exists).
 */
const METADATA_BYTES = 14 * 1024;
/** The fixed bound; without one, these calls took RSS 400 to 620 MiB past its start. */
const RSS_GROWTH_BOUND = 256 * MiB;
const TOKENS = { worker: 'worker-token-000000001', coordinator: 'coordinator-token-0001' } as const;

let dir: ReturnType<typeof tempDir>;
let credentials: string;

beforeAll(() => {
  dir = tempDir('fencer-a6-flood-');
  credentials = join(dir.path, 'credentials.json');
  writeFileSync(
    credentials,
    JSON.stringify(Object.entries(TOKENS).map(([role, token]) => ({ token, identity: `${role}-1`, role }))),
  );
});

afterAll(() => dir?.remove());

/** A process's resident set in bytes (Linux). */
function rss(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}

/** One authenticated call that the server answers OK, or a throw. */
interface HonestCaller {
  ask(): Promise<void>;
  close(): void;
}

const SERVERS = [
  {
    name: 'sink',
    path: '/fencing.v1.Sink/Write',
    args: (data: string) => ['sink', '--credentials', credentials, '--data', data],
    honest: (address: string): HonestCaller => {
      const calls = sinkCalls(address, TOKENS.worker);
      return { ask: async () => void (await calls.getFence('r')), close: () => calls.close() };
    },
  },
  {
    name: 'coordinator',
    path: '/fencing.v1.Coordinator/Acquire',
    // No sink is needed to answer Describe.
    args: (data: string) => ['coordinator', '--credentials', credentials, '--data', data, '--sink', '127.0.0.1:9'],
    honest: (address: string): HonestCaller => {
      const client = coordinatorClient(address);
      const api = coordinatorApi(client, TOKENS.worker);
      return { ask: async () => void ok(await api.describe('r')), close: () => client.close() };
    },
  },
] as const;

describe.runIf(process.platform === 'linux')('A6: unauthenticated callers cost a bounded amount of memory', () => {
  it.each(SERVERS)(
    `$name: ${CALLS} unauthenticated calls with ${METADATA_BYTES / 1024} KiB of headers each leave RSS within ${RSS_GROWTH_BOUND / MiB} MiB of its start, and an authenticated caller is answered throughout`,
    async ({ name, path, args, honest }) => {
      const server = await startFencer([...args(join(dir.path, name)), '--listen', '127.0.0.1:0']);
      const pid = server.child.pid!;
      const caller = honest(server.address);
      try {
        await caller.ask(); // connected, so the baseline holds the authenticated connection too
        const baseline = rss(pid);
        let peak = baseline;
        const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 50);
        // Where the flood was (the share of its calls answered) at each authenticated answer.
        let progress = 0;
        const answeredAt: number[] = [];
        const failures: unknown[] = [];
        let flooding = true;
        const asking = (async () => {
          while (flooding) {
            try {
              await caller.ask();
              answeredAt.push(progress);
            } catch (error) {
              failures.push(error);
            }
          }
        })();
        const flood = await floodCalls(server.address, {
          path,
          metadata: paddingMetadata(METADATA_BYTES),
          calls: CALLS,
          connections: 2,
          onAnswered: (answered) => (progress = answered / CALLS),
        });
        flooding = false;
        await asking;
        clearInterval(sampler);
        peak = Math.max(peak, rss(pid));

        expect(flood).toEqual({ answered: CALLS });
        expect(failures).toEqual([]);
        // Answered in both halves of the flood, not only before or after it.
        expect([answeredAt.some((at) => at < 0.5), answeredAt.some((at) => at >= 0.5)]).toEqual([true, true]);
        expect(
          peak - baseline,
          `RSS ${Math.round(baseline / MiB)} MiB before, ${Math.round(peak / MiB)} MiB at its peak`,
        ).toBeLessThan(RSS_GROWTH_BOUND);
      } finally {
        caller.close();
        await stopFencer(server);
      }
    },
    120_000,
  );
});
