// checkHistory against histories of a correct system: a model coordinator
// and sink that follow PROTOCOL.md, driven by random workers whose calls
// overlap, lose their requests or their replies, and a coordinator that
// may crash (down a while, back with every unreleased grant valid a full
// TTL, L7) or lose its data (crash-wipe: back with no leases and no request
// records, minting above the sink's fence, L6), or meet a rival (split
// brain: a fresh second coordinator on the same sink takes some workers'
// calls for a while). No such history may be accused. The same workers against a sink that accepts stale tokens, or a
// coordinator whose leases end early, must be caught, so the property
// cannot pass with the checker switched off.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkHistory } from './check.js';
import type { FaultPeriod, FinalState, History, Operation, Outcome, StoredResult } from './history.js';

/** One call a worker makes: what, on which resource or result id, how long, and whether an answer comes back. */
interface Step {
  /**
   * Not calls but faults, from the step's sending for toEffectMs × 4:
   * `crash` and `wipe` take the coordinator down, and it comes back with its
   * data (L7) or none; `rival` starts a fresh coordinator on the same sink
   * that takes the calls of every other worker.
   */
  readonly action: 'acquire' | 'renew' | 'release' | 'write' | 'read' | 'crash' | 'wipe' | 'rival';
  readonly pick: number;
  /** Time from sending to taking effect, and from effect to answer (ms, ≥ 1: the effect is strictly inside). */
  readonly toEffectMs: number;
  readonly toAnswerMs: number;
  readonly thinkMs: number;
  readonly fate: 'answered' | 'request-lost' | 'answer-lost';
}

interface Plan {
  /** Each worker's clock offset (ms); none: every clock exact. Faults are stamped on the shared clock, as the harness's own. */
  readonly clockOffsetsMs?: readonly number[];
  readonly workers: number;
  readonly resources: number;
  readonly steps: readonly Step[];
}

const stepArb: fc.Arbitrary<Step> = fc.record({
  action: fc.constantFrom('acquire', 'renew', 'release', 'write', 'write', 'write', 'read'),
  pick: fc.nat(11),
  toEffectMs: fc.integer({ min: 1, max: 30 }),
  toAnswerMs: fc.integer({ min: 1, max: 30 }),
  thinkMs: fc.integer({ min: 0, max: 20 }),
  fate: fc.constantFrom('answered', 'answered', 'answered', 'answered', 'request-lost', 'answer-lost'),
});
const planArb: fc.Arbitrary<Plan> = fc.record({
  workers: fc.integer({ min: 1, max: 4 }),
  resources: fc.integer({ min: 1, max: 2 }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 120, size: 'max' }),
});
/** How far the clocks of faultyPlanArb's workers may disagree (ms), as the soak measures it. */
const CLOCK_UNCERTAINTY_MS = 3;
/** Plans whose coordinator may crash, lose its data or meet a rival: about one step in twenty does one. */
const faultyPlanArb: fc.Arbitrary<Plan> = fc.record({
  // Within [0, CLOCK_UNCERTAINTY_MS] of the harness's clock and of each other.
  clockOffsetsMs: fc.array(fc.integer({ min: 0, max: CLOCK_UNCERTAINTY_MS }), { minLength: 4, maxLength: 4 }),
  workers: fc.integer({ min: 1, max: 4 }),
  resources: fc.integer({ min: 1, max: 2 }),
  steps: fc.array(
    fc.oneof(
      { arbitrary: stepArb, weight: 19 },
      { arbitrary: stepArb.map((step) => ({ ...step, action: 'crash' as const })), weight: 1 },
      { arbitrary: stepArb.map((step) => ({ ...step, action: 'wipe' as const })), weight: 1 },
      { arbitrary: stepArb.map((step) => ({ ...step, action: 'rival' as const })), weight: 1 },
    ),
    { minLength: 1, maxLength: 120, size: 'max' },
  ),
});

const TTL_MS = 60;
const lost: Outcome = { type: 'unknown', code: 'DEADLINE_EXCEEDED', reason: '' };
const refused = (code: string, reason: string): Outcome => ({ type: 'fail', code, reason });
/** A request field as the recorder holds it: a string. */
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const ok = (response: Record<string, unknown>): Outcome => ({ type: 'ok', response });

/** What a coordinator holds: each resource's latest grant, its token counter, and its request records (R1). */
interface Memory {
  readonly grants: Map<string, { owner: string; token: bigint; expiresAtMs: number } | undefined>;
  readonly lastToken: Map<string, bigint>;
  readonly requests: Map<string, { resource: string; owner: string; token: bigint }>;
}
const emptyMemory = (): Memory => ({ grants: new Map(), lastToken: new Map(), requests: new Map() });

/** What a worker believes: its latest token per resource, and an Acquire whose answer it lost (R4: retried as is). */
interface Worker {
  readonly owner: string;
  /** How far ahead of the shared clock its stamps read (ms). */
  readonly clockOffsetMs: number;
  readonly tokens: Map<string, bigint>;
  pending: Record<string, unknown> | undefined;
}

/** A rule the model breaks on purpose. */
interface Broken {
  /** The sink stores writes below the fence too (F1). */
  readonly acceptStale?: boolean;
  /** The coordinator answers a TTL but lets the lease end halfway through it (L2, as a fast clock would). */
  readonly earlyExpiry?: boolean;
  /** A wiped coordinator mints from its own lost counter and grants even where the sink kept its fence (L6). */
  readonly ignoresFence?: boolean;
}

/**
 * Runs the plan on a model coordinator (L1–L5, R1) and sink (F1, F3, F4):
 * each call takes effect atomically at one instant strictly between its
 * sending and its answer, in time order across workers.
 */
function simulate(plan: Plan, broken: Broken = {}): History {
  const resources = Array.from({ length: plan.resources }, (_, i) => `job-${i}`);
  const primary = emptyMemory();
  const { grants, lastToken, requests } = primary;
  // A rival coordinator while one runs, and whose calls it takes: every other worker's.
  let rival: { memory: Memory; untilMs: number } | undefined;
  const memoryOf = (owner: string, nowMs: number): Memory =>
    rival && nowMs < rival.untilMs && Number(owner.slice(1)) % 2 === 1 ? rival.memory : primary;
  const fences = new Map<string, bigint>();
  const results = new Map<string, { token: bigint; payload: string }>();
  const faults: FaultPeriod[] = [];
  let coordinatorDownUntilMs = -Infinity;
  let requestIds = 0;

  const leaseOf = (resource: string, owner: string, token: bigint) => ({
    lease: { resource, owner_id: owner, incarnation: '1', token: String(token), ttl_ms: String(TTL_MS) },
  });
  const expiresAtMs = (nowMs: number) => nowMs + (broken.earlyExpiry ? TTL_MS / 2 : TTL_MS);
  const effect = (method: Operation['method'], request: Record<string, unknown>, nowMs: number): Outcome => {
    const resource = text(request.resource);
    const owner = text(request.owner_id);
    const coordinator = memoryOf(owner, nowMs);
    const { grants, lastToken, requests } = coordinator;
    const grant = grants.get(resource);
    const valid = grant !== undefined && nowMs < grant.expiresAtMs;
    const holds = grant?.owner === owner && grant.token === BigInt(text(request.token) || '0');
    const key = `${resource}/${text(request.result_id)}`;
    // A call that reaches a crashed coordinator does nothing, and its caller cannot tell.
    const down = coordinator === primary && nowMs < coordinatorDownUntilMs;
    if (method !== 'Write' && method !== 'Read' && down) return lost;
    switch (method) {
      case 'Acquire': {
        const recorded = requests.get(text(request.request_id));
        if (recorded) return ok({ ...leaseOf(recorded.resource, recorded.owner, recorded.token), replayed: true });
        if (valid) return refused('ABORTED', 'LEASE_HELD');
        // L6: a coordinator that lost its counter learns the fence from the sink and mints above it.
        const fence = fences.get(resource) ?? 0n;
        const counter = lastToken.get(resource) ?? (broken.ignoresFence ? 0n : fence);
        const token = (counter > fence || broken.ignoresFence ? counter : fence) + 1n;
        lastToken.set(resource, token);
        if (token > fence) fences.set(resource, token); // L3: the fence first, then the grant
        grants.set(resource, { owner, token, expiresAtMs: expiresAtMs(nowMs) });
        requests.set(text(request.request_id), { resource, owner, token });
        return ok({ ...leaseOf(resource, owner, token), replayed: false });
      }
      case 'Renew':
        if (!holds) return refused('FAILED_PRECONDITION', 'NOT_LEASE_HOLDER');
        if (!valid) return refused('FAILED_PRECONDITION', 'LEASE_EXPIRED');
        grants.set(resource, { ...grant, expiresAtMs: expiresAtMs(nowMs) });
        return ok(leaseOf(resource, owner, grant.token));
      case 'Release':
        if (holds) grants.set(resource, undefined);
        return ok({ released: holds });
      case 'Write': {
        const fence = fences.get(resource) ?? 0n;
        const token = BigInt(text(request.token));
        if (token < fence && !broken.acceptStale) return refused('FAILED_PRECONDITION', 'STALE_TOKEN');
        if (token > fence) return refused('FAILED_PRECONDITION', 'TOKEN_NOT_ISSUED');
        const existing = results.get(key);
        if (existing && existing.payload !== request.payload) return refused('ALREADY_EXISTS', 'RESULT_CONFLICT');
        if (!existing) results.set(key, { token, payload: text(request.payload) });
        return ok({ outcome: existing ? 'REPLAYED' : 'APPLIED', fence: String(token) });
      }
      case 'Read': {
        const stored = results.get(key);
        return stored
          ? ok({ payload: stored.payload, token: String(stored.token) })
          : refused('NOT_FOUND', 'RESULT_NOT_FOUND');
      }
      default:
        throw new Error(`the model does not serve ${method}`);
    }
  };

  // A worker's next call, from what it believes now.
  const requestOf = (worker: Worker, step: Step): [Operation['method'], Record<string, unknown>] => {
    const resource = resources[step.pick % resources.length]!;
    const identity = { resource, owner_id: worker.owner, incarnation: '1' };
    const token = String(worker.tokens.get(resource) ?? 1n);
    // Few result ids, and two payloads for each, so replays and conflicts happen.
    const resultId = `x${step.pick % 3}`;
    switch (step.action) {
      case 'acquire':
        return ['Acquire', worker.pending ?? { request_id: `q${++requestIds}`, ...identity, ttl_ms: String(TTL_MS) }];
      case 'renew':
        return ['Renew', { ...identity, token, ttl_ms: '0' }];
      case 'release':
        return ['Release', { ...identity, token }];
      case 'write':
        return ['Write', { resource, token, result_id: resultId, payload: `${resultId}:${step.pick % 2}` }];
      case 'read':
        return ['Read', { resource, result_id: resultId }];
      case 'crash':
      case 'wipe':
      case 'rival':
        throw new Error('a fault is not a call');
    }
  };

  const operations: Operation[] = [];
  const events: { atMs: number; seq: number; run: () => void }[] = [];
  let seq = 0;
  const at = (atMs: number, run: () => void) => events.push({ atMs, seq: seq++, run });
  let nextStep = 0;
  const send = (worker: Worker, sentAtMs: number) => {
    const step = plan.steps[nextStep++];
    if (!step) return;
    if (step.action === 'rival') {
      const endMs = sentAtMs + step.toEffectMs * 4;
      at(sentAtMs, () => {
        // One rival at a time, as the soak's split-brain.
        if (rival && rival.untilMs > sentAtMs) return;
        faults.push({ name: 'split-brain', target: 'coordinator', startMs: sentAtMs, endMs });
        rival = { memory: emptyMemory(), untilMs: endMs };
      });
      at(sentAtMs, () => send(worker, sentAtMs + step.thinkMs));
      return;
    }
    if (step.action === 'crash' || step.action === 'wipe') {
      const wipe = step.action === 'wipe';
      const endMs = sentAtMs + step.toEffectMs * 4;
      faults.push({ name: wipe ? 'crash-wipe' : 'crash', target: 'coordinator', startMs: sentAtMs, endMs });
      at(sentAtMs, () => {
        if (wipe) [grants, requests, lastToken].forEach((memory) => memory.clear());
        coordinatorDownUntilMs = Math.max(coordinatorDownUntilMs, endMs);
      });
      // L7: back up, it holds every grant it had not released for a full TTL.
      at(endMs, () => {
        for (const [resource, grant] of grants)
          if (grant) grants.set(resource, { ...grant, expiresAtMs: endMs + TTL_MS });
      });
      // Not a call: the worker's next step follows.
      at(sentAtMs, () => send(worker, sentAtMs + step.thinkMs));
      return;
    }
    const [method, request] = requestOf(worker, step);
    let answer: Outcome = lost;
    const effectAtMs = sentAtMs + step.toEffectMs;
    const answeredAtMs = effectAtMs + step.toAnswerMs;
    if (step.fate !== 'request-lost') at(effectAtMs, () => (answer = effect(method, request, effectAtMs)));
    at(answeredAtMs, () => {
      const outcome = step.fate === 'answered' ? answer : lost;
      // Numbered as the recorder numbers them: in the order answers arrive.
      const op = { id: operations.length + 1, process: worker.owner, method, request, outcome };
      const stamp = worker.clockOffsetMs;
      operations.push({ ...op, invokedMs: sentAtMs + stamp, completedMs: answeredAtMs + stamp });
      if (method === 'Acquire') worker.pending = outcome.type === 'unknown' ? request : undefined;
      if (method === 'Acquire' && outcome.type === 'ok') {
        const lease = outcome.response.lease as { token: string };
        worker.tokens.set(text(request.resource), BigInt(lease.token));
      }
      send(worker, answeredAtMs + step.thinkMs);
    });
  };
  for (let i = 0; i < plan.workers; i++) {
    const clockOffsetMs = plan.clockOffsetsMs?.[i] ?? 0;
    send({ owner: `w${i}`, clockOffsetMs, tokens: new Map(), pending: undefined }, i);
  }
  while (events.length > 0) {
    events.sort((a, b) => a.atMs - b.atMs || a.seq - b.seq);
    events.shift()!.run();
  }

  const stored: Record<string, Record<string, StoredResult | null>> = {};
  for (const op of operations.filter((op) => op.method === 'Write')) {
    const resource = text(op.request.resource);
    const resultId = text(op.request.result_id);
    const result = results.get(`${resource}/${resultId}`);
    (stored[resource] ??= {})[resultId] = result ? { token: String(result.token), payload: result.payload } : null;
  }
  const final: FinalState = {
    fences: Object.fromEntries(resources.map((r) => [r, String(fences.get(r) ?? 0n)])),
    results: stored,
  };
  return { operations, final, faults };
}

describe('checkHistory on histories of a correct model', () => {
  it('accuses none of them', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        // The model's clock is exact: no uncertainty to allow for.
        expect(checkHistory(simulate(plan), { clockUncertaintyMs: 0 })).toEqual({ violations: [], unchecked: [] });
      }),
      { numRuns: 300 },
    );
  });

  it('accuses none of them when the coordinator crashes (L7), loses its data (L6) or meets a rival', () => {
    const plansWith = new Map<string, number>();
    fc.assert(
      fc.property(faultyPlanArb, (plan) => {
        const history = simulate(plan);
        for (const kind of new Set(history.faults.map((fault) => fault.name)))
          plansWith.set(kind, (plansWith.get(kind) ?? 0) + 1);
        expect(checkHistory(history, { clockUncertaintyMs: CLOCK_UNCERTAINTY_MS })).toEqual({
          violations: [],
          unchecked: [],
        });
      }),
      { numRuns: 300 },
    );
    // The property met every fault, not only plans that drew none.
    for (const kind of ['crash', 'crash-wipe', 'split-brain']) expect(plansWith.get(kind), kind).toBeGreaterThan(50);
  });

  it("accuses none of them when the coordinator's clock runs twice as fast and the checker is told so (L1)", () => {
    fc.assert(
      fc.property(faultyPlanArb, (plan) => {
        const history = simulate(plan, { earlyExpiry: true });
        const coordinatorClock = { maxRate: 2, aheadMs: 0 };
        expect(checkHistory(history, { clockUncertaintyMs: CLOCK_UNCERTAINTY_MS, coordinatorClock })).toEqual({
          violations: [],
          unchecked: [],
        });
      }),
      { numRuns: 300 },
    );
  });

  it('catches a wiped coordinator that mints below the fence (L6), in some of them', () => {
    const plans = fc.sample(faultyPlanArb, { numRuns: 300, seed: 42 });
    const found = plans.map(
      (plan) =>
        checkHistory(simulate(plan, { ignoresFence: true }), { clockUncertaintyMs: CLOCK_UNCERTAINTY_MS }).violations,
    );
    expect(found.filter((violations) => violations.some((v) => v.message.endsWith('(L6)'))).length).toBeGreaterThan(10);
  });

  it('catches a sink that accepts stale tokens, in some of them', () => {
    const plans = fc.sample(planArb, { numRuns: 300, seed: 42 });
    const accused = plans.filter(
      (plan) => checkHistory(simulate(plan, { acceptStale: true }), { clockUncertaintyMs: 0 }).violations.length > 0,
    );
    expect(accused.length).toBeGreaterThan(10);
    // ...and the same plans against the correct sink stay clean.
    expect(plans.flatMap((plan) => checkHistory(simulate(plan), { clockUncertaintyMs: 0 }).violations)).toEqual([]);
  });

  it('catches a coordinator whose leases end early, by the lock model, in some of them', () => {
    const plans = fc.sample(planArb, { numRuns: 300, seed: 42 });
    const found = plans.map(
      (plan) => checkHistory(simulate(plan, { earlyExpiry: true }), { clockUncertaintyMs: 0 }).violations,
    );
    // The fence still orders every write, so S1–S6 hold: only the lock model sees two valid leases at once.
    expect(found.flat().filter((v) => v.rule !== 'LOCK')).toEqual([]);
    expect(found.filter((violations) => violations.some((v) => v.message.endsWith('(L2)'))).length).toBeGreaterThan(10);
  });
});
