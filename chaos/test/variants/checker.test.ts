// The negative controls of issue 9: the same scripted workers, through the
// same proxies, run once against the real services and once against a
// deliberately broken variant (chaos/variants). The checker finds the real
// run safe and reports the variant's broken rule from the recorded history
// and the sink's final state alone, never from knowing which variant ran.
import { describe, expect, it } from 'vitest';
import { eventually } from '@fencer/testkit';
import { variantBin, workerClockEnv, type VariantName } from '@fencer/variants';
import { clockSkew, partition, type Scenario, type ScenarioVerdict } from '../../src/index.js';
import { acquire, scenario, scripted, write } from '../scenarios/helpers.js';

/** What a script reports: the events the test asserts on, and the checker's verdict. */
interface Run {
  readonly outcomes: readonly string[];
  readonly verdict: ScenarioVerdict;
}

/** How a write or a hand-made call ended, as one word. */
const ended = (event: { event: string; outcome?: string; reason?: string }) =>
  event.event === 'written' ? event.outcome! : event.reason!;

/**
 * A loses its lease to a partition from the coordinator while a write of
 * result `step-1` is in the sink; B takes over and writes its own `step-1`.
 * F2 makes A's write land before B's, so B's is a conflict (F3).
 */
async function overlappingTakeover(s: Scenario): Promise<Run> {
  const a = await s.worker('worker-a', scripted('job', 200, 5_000));
  const b = await s.worker('worker-b', scripted('job', 10_000, 5_000));
  await acquire(a);
  a.send('write step-1 from-a');
  await a.next('sending', { where: (e) => e.method === 'Write' });
  await s.inject(partition(a.links.coordinator));
  await s.leaseGone('job');
  await acquire(b);
  const fromB = await write(b, 'step-1', 'from-b');
  const fromA = await a.next(['written', 'refused'], { where: (e) => e.event === 'written' || e.command === 'write' });
  return { outcomes: [ended(fromA), ended(fromB)], verdict: await s.verdict() };
}

/** The holder writes under its token plus one, a number nobody granted. */
async function forgedToken(s: Scenario): Promise<Run> {
  const a = await s.worker('worker-a', scripted('job', 10_000));
  const token = await acquire(a);
  a.send(`forge ${token + 1n} guessed made-up`);
  const forged = await a.next(['written', 'refused']);
  return { outcomes: [ended(forged)], verdict: await s.verdict() };
}

/** A loses its lease to a partition; B is granted it; A, unaware, writes. */
async function staleHolderWrites(s: Scenario): Promise<Run> {
  const a = await s.worker('worker-a', scripted('job', 200, 5_000));
  const b = await s.worker('worker-b', scripted('job', 10_000, 5_000));
  const token = await acquire(a);
  // A's own grant must have reached the sink first, or A's write is merely not issued yet.
  await eventually(async () => ((await s.admin.sink.getFence('job')) === token ? true : undefined), {
    what: "A's fence at the sink",
  });
  await s.inject(partition(a.links.coordinator));
  await s.leaseGone('job');
  await acquire(b);
  const late = await write(a, 'a-late', 'from-a');
  return { outcomes: [ended(late)], verdict: await s.verdict() };
}

/** A acquires, releases, then retries that same acquisition by its request id (R1). */
async function retryAfterRelease(s: Scenario): Promise<Run> {
  const a = await s.worker('worker-a', scripted('job', 10_000));
  a.send('acquire');
  const first = await a.next('acquired');
  a.send('release');
  await a.next('released');
  a.send(`acquire ${first.requestId}`);
  const retry = await a.next(['acquired', 'refused']);
  const outcome = retry.event === 'acquired' ? `token ${retry.token === first.token ? 'same' : 'new'}` : retry.reason;
  return { outcomes: [outcome], verdict: await s.verdict() };
}

/**
 * B's clock runs four times too fast, and its calls carry it; once B's own
 * stamps show it a TTL ahead of the shared clock, it asks for the lease that
 * A holds and renews; then A writes.
 */
async function fastClockAcquires(s: Scenario): Promise<Run> {
  const a = await s.worker('worker-a', scripted('job', 3_000));
  // Its deadlines run on its clock too: five of its seconds are 1.25 s.
  const b = await s.worker('worker-b', scripted('job', 3_000, 5_000), { clock: true, env: workerClockEnv() });
  await acquire(a);
  await s.inject(clockSkew(b.clock!, 'worker-b', 4));
  await eventually(
    async () => {
      b.send('describe');
      const described = await b.next(['described', 'refused']);
      // A stamp made no later than it arrived: B's clock is at least this far ahead.
      return described.atMs - (performance.timeOrigin + performance.now()) > 3_000 || undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: "B's clock to run a TTL ahead" },
  );
  b.send('acquire');
  const asked = await b.next(['acquired', 'refused']);
  const late = await write(a, 'a-1', 'from-a');
  return {
    outcomes: [asked.event === 'acquired' ? 'granted' : asked.reason, ended(late)],
    verdict: await s.verdict(),
  };
}

const controls: readonly {
  readonly variant: VariantName;
  readonly service: 'sink' | 'coordinator';
  readonly script: (s: Scenario) => Promise<Run>;
  /** What the real services answer, then what the variant answers. */
  readonly real: readonly string[];
  readonly broken: readonly string[];
  /** The rules the checker must name for the variant, and what its findings must say, if it matters. */
  readonly rules: readonly string[];
  readonly says?: RegExp;
}[] = [
  {
    // Both writes pass the check before either is stored; B's overwrites A's acknowledged result.
    variant: 'two-step-sink',
    service: 'sink',
    script: overlappingTakeover,
    real: ['applied', 'RESULT_CONFLICT'],
    broken: ['applied', 'applied'],
    rules: ['S5', 'S6'],
  },
  {
    // Applied under a token above the fence, which stays where it was: the
    // fence is below an acknowledged token (S3), and the write was
    // acknowledged under a fence other than its token (F1).
    variant: 'lenient-sink',
    service: 'sink',
    script: forgedToken,
    real: ['TOKEN_NOT_ISSUED'],
    broken: ['applied'],
    rules: ['S3', 'protocol'],
  },
  {
    // B's grant is answered before the fence moves: A's write under the old token still lands.
    variant: 'grant-first-coordinator',
    service: 'coordinator',
    script: staleHolderWrites,
    real: ['STALE_TOKEN'],
    broken: ['applied'],
    rules: ['S3'],
  },
  {
    // The retry finds no record of the first grant and mints a second token for one request id.
    variant: 'no-request-records-coordinator',
    service: 'coordinator',
    script: retryAfterRelease,
    real: ['GRANT_ENDED'],
    broken: ['token new'],
    rules: ['S2'],
  },
  {
    // The variant ends A's lease, valid on its own clock, because B's clock says it is over: only the lock model sees that (L2); the fence keeps the writes safe.
    variant: 'worker-clock-coordinator',
    service: 'coordinator',
    script: fastClockAcquires,
    real: ['LEASE_HELD', 'applied'],
    broken: ['granted', 'STALE_TOKEN'],
    rules: ['LOCK'],
    says: /^job: Acquire #\d+ \(worker-b\) was granted token \d+ while worker-a#\d+ held token \d+: .* \(L2\)$/,
  },
];

// Real processes through proxies: a loaded machine makes them slower, never wrong.
describe('the checker against deliberately broken variants', { timeout: 120_000 }, () => {
  it.each(controls)(
    '$variant: the real services pass, the variant is caught ($rules)',
    async ({ variant, service, script, real, broken, rules, says }) => {
      const name = variant.replaceAll('-', '_');
      const safe = await script(await scenario(`${name}_real`));
      expect(safe.outcomes).toEqual(real);
      expect(safe.verdict).toMatchObject({ violations: [], unchecked: [] });

      const caught = await script(await scenario(name, { binaries: { [service]: variantBin(variant) } }));
      expect(caught.outcomes).toEqual(broken);
      const named = new Set(caught.verdict.violations.map((violation) => violation.rule));
      expect([...named].sort()).toEqual([...rules].sort());
      // Each violation points at recorded operations, so it can be traced to the calls.
      for (const violation of caught.verdict.violations) expect(violation.operations?.length).toBeGreaterThan(0);
      if (says)
        expect(caught.verdict.violations.map((violation) => violation.message)).toEqual([expect.stringMatching(says)]);
    },
  );
});
