// Real `fencer sink` processes: SIGKILL in the middle of a stream of writes
// and fence advances, then a restart on the same data directory and address
// (F6, S5);
// the data directory lock; a clean SIGTERM stop under load.
//
// What a process kill can and cannot show: it proves acknowledged writes and
// fences are on disk and that a batch is never torn, but the kernel's page
// cache survives a killed process, so a missing fsync goes unseen here, and
// on a disk that syncs in ~0.3 ms an answer sent before its batch is written
// rarely loses the race. "Answered only once durable" is therefore proven
// deterministically with a hand-cranked disk in src/core/sink-engine.test.ts
// and src/core/group-commit.test.ts.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { remoteFailure } from '@fencer/proto';
import {
  eventually,
  runFencer,
  startFencer,
  stopFencer,
  tempDir,
  type FencerProcess,
  readOrMissing,
  sinkCalls,
  writeOutcome,
  type SinkCalls,
} from '@fencer/testkit';

const started: FencerProcess[] = [];
const dirs: ReturnType<typeof tempDir>[] = [];
async function sink(dataDir: string, listen = '127.0.0.1:0'): Promise<FencerProcess> {
  const process = await startFencer(['sink', '--insecure', '--listen', listen, '--data', dataDir]);
  started.push(process);
  return process;
}
function newDir() {
  const dir = tempDir('fencer-sink-crash-');
  dirs.push(dir);
  return dir.path;
}

afterEach(async () => {
  for (const process of started.splice(0)) await stopFencer(process);
  for (const dir of dirs.splice(0)) dir.remove();
});

/** A payload whose size and bytes are determined by its id, so any tear shows. */
function payloadFor(id: string): Buffer {
  const size = 1 + (Number.parseInt(createHash('sha256').update(id).digest('hex').slice(0, 6), 16) % 48_000);
  const block = createHash('sha256').update(`payload:${id}`).digest();
  return Buffer.alloc(size, block);
}

interface Attempt {
  resultId: string;
  token: bigint;
  /** undefined while unanswered (in flight when the process died). */
  outcome?: string;
}

describe('fencer sink under SIGKILL (F6, S5)', () => {
  it('every acknowledged write survives, the fence is the last acknowledged advance, nothing is half-applied', async () => {
    const dataDir = newDir();
    const first = await sink(dataDir);
    const coordinator = sinkCalls(first.address);
    const workers = Array.from({ length: 6 }, () => sinkCalls(first.address));
    const resource = 'crash-job';
    let fence = 1n;
    await coordinator.advance({ resource, token: '1', grant_id: 'grant-1' });

    const attempts: Attempt[] = [];
    let killed = false;
    let acknowledged = 0;
    const streams = workers.map(async (client, w) => {
      for (let i = 0; !killed; i++) {
        const attempt: Attempt = { resultId: `w${w}-${i}`, token: fence };
        attempts.push(attempt);
        try {
          const response = await client.write({
            resource,
            token: attempt.token.toString(),
            result_id: attempt.resultId,
            payload: payloadFor(attempt.resultId),
          });
          attempt.outcome = response.outcome;
          acknowledged++;
        } catch (error) {
          if (killed) return;
          const reason = remoteFailure(error as never).reason;
          // A write sent just before an advance may be fenced out: that is an answer too.
          if (reason !== 'STALE_TOKEN') throw error;
          attempt.outcome = reason;
        }
      }
    });

    // The coordinator advances a few times while the writes stream, then
    // kills the sink between two advances, with writes still in flight.
    let lastAcknowledgedAdvance = 1n;
    for (let round = 1; round <= 3; round++) {
      const target = acknowledged + 60;
      await eventually(() => (acknowledged >= target ? true : undefined), {
        timeoutMs: 20_000,
        what: `${target} acknowledged writes`,
      });
      const next = fence + 1n;
      await coordinator.advance({ resource, token: next.toString(), grant_id: `grant-${next}` });
      lastAcknowledgedAdvance = next;
      fence = next;
    }
    const target = acknowledged + 60;
    await eventually(() => (acknowledged >= target ? true : undefined), {
      timeoutMs: 20_000,
      what: 'writes after the last advance',
    });
    killed = true;
    first.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await Promise.all(streams);
    for (const client of [coordinator, ...workers]) client.close();

    const inFlight = attempts.filter((a) => a.outcome === undefined);
    const accepted = attempts.filter((a) => a.outcome === 'APPLIED' || a.outcome === 'REPLAYED');
    expect(inFlight.length).toBeGreaterThan(0); // killed mid-stream, not between writes
    expect(accepted.length).toBeGreaterThanOrEqual(240);

    // A restarted server can listen again on the address it had, even
    // right after a kill left its clients' connections behind.
    const second = await sink(dataDir, first.address);
    const reader: SinkCalls = sinkCalls(second.address);
    try {
      expect(await reader.getFence(resource)).toEqual({ fence: lastAcknowledgedAdvance.toString() });
      for (const attempt of attempts) {
        const found = await readOrMissing(reader, resource, attempt.resultId);
        if (attempt.outcome === 'APPLIED' || attempt.outcome === 'REPLAYED') {
          // S5: acknowledged, so readable, byte for byte, under its token.
          expect(found, attempt.resultId).toBeDefined();
          expect(found!.token).toBe(attempt.token.toString());
          expect(found!.payload.equals(payloadFor(attempt.resultId))).toBe(true);
        } else if (attempt.outcome === 'STALE_TOKEN') {
          expect(found, attempt.resultId).toBeUndefined();
        } else if (found !== undefined) {
          // In flight at the kill: either absent or complete, never torn.
          expect(found.token).toBe(attempt.token.toString());
          expect(found.payload.equals(payloadFor(attempt.resultId))).toBe(true);
        }
      }
      // The restarted sink keeps enforcing the fence it had.
      const stale = await reader
        .write({
          resource,
          token: (lastAcknowledgedAdvance - 1n).toString(),
          result_id: 'after-restart',
          payload: Buffer.from('x'),
        })
        .catch((e) => e);
      expect(remoteFailure(stale).reason).toBe('STALE_TOKEN');
    } finally {
      reader.close();
    }
  });
});

describe('fencer sink process lifecycle', () => {
  it('a second sink on the same data directory exits non-zero with a one-line reason while the first keeps serving', async () => {
    const dataDir = newDir();
    const first = await sink(dataDir);
    const second = await runFencer(['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', dataDir]);
    expect(second.code).not.toBe(0);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^fencer sink: data directory .* is in use by another process \(is a second sink running on it\?\)$/,
    );
    const client = sinkCalls(first.address);
    try {
      expect(await client.getFence('r')).toEqual({ fence: '0' });
    } finally {
      client.close();
    }
  });

  it('SIGTERM under load: exit 0, every write answered APPLIED or UNAVAILABLE, every APPLIED one survives the restart', async () => {
    const dataDir = newDir();
    const first = await sink(dataDir);
    const coordinator = sinkCalls(first.address);
    await coordinator.advance({ resource: 'r', token: '4', grant_id: 'g4' });
    const workers = Array.from({ length: 4 }, () => sinkCalls(first.address));
    const answers: { resultId: string; outcome: string }[] = [];
    // Each worker keeps writing through the shutdown until it is refused, so
    // calls arrive before, during and after the server stops taking them.
    const streams = workers.map(async (client, w) => {
      for (let i = 0; ; i++) {
        const resultId = `w${w}-${i}`;
        const { outcome } = await writeOutcome(
          client.write({ resource: 'r', token: '4', result_id: resultId, payload: payloadFor(resultId) }),
        );
        answers.push({ resultId, outcome });
        if (outcome !== 'APPLIED') return;
      }
    });
    await eventually(() => (answers.length >= 100 ? true : undefined), {
      timeoutMs: 20_000,
      what: '100 answered writes',
    });
    first.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    await Promise.all(streams);
    for (const client of [coordinator, ...workers]) client.close();

    // A stopping sink refuses cleanly: UNAVAILABLE (from the transport, or
    // with its reason from a store already closing), never INTERNAL or a
    // protocol refusal. Each worker stops at its first refusal.
    const refused = answers.filter((a) => a.outcome !== 'APPLIED').map((a) => a.outcome);
    expect(refused).toHaveLength(workers.length);
    for (const outcome of refused) expect(['code 14', 'UNAVAILABLE']).toContain(outcome);
    const second = await sink(dataDir);
    const reader = sinkCalls(second.address);
    try {
      expect(await reader.getFence('r')).toEqual({ fence: '4' });
      for (const { resultId } of answers.filter((a) => a.outcome === 'APPLIED')) {
        const found = await readOrMissing(reader, 'r', resultId);
        expect(found?.token, resultId).toBe('4');
        expect(found!.payload.equals(payloadFor(resultId))).toBe(true);
      }
    } finally {
      reader.close();
    }
  });
});
