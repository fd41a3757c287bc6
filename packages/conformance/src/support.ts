// What every check of the kit stands on: the verdicts (Broken, Skip), the
// reading of answers and refusals, and the calls most rules begin with.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { healthStatus } from '@fencer/supervisor';
import type { Answer, Caller, Refusal, Wire } from './wire.js';

/** What one check found. */
export interface CheckResult {
  readonly rule: string;
  readonly title: string;
  readonly status: 'held' | 'failed' | 'skipped';
  /** Evidence of a failure, or why it was skipped; '' when it held. */
  readonly detail: string;
}

/** A rule broken, with its evidence. */
export class Broken extends Error {}
/** A check that cannot run against this deployment. */
export class Skip extends Error {}

/** What every check gets: the clients, and names under this run's own prefix. */
export interface CheckContext {
  readonly wire: Wire;
  /** A resource, request or result id of this run, unique within it. */
  fresh(kind: string): string;
}

export interface Check {
  readonly rule: string;
  readonly title: string;
  run(context: CheckContext): Promise<void>;
}

export interface WireLease {
  resource: string;
  owner_id: string;
  incarnation: string;
  token: string;
  ttl_ms: string;
  remaining_ms: string;
}

export const TTL_MS = '30000';
export const MAX_TOKEN = '18446744073709551615';

export const describeRefusal = (r: Refusal) =>
  `${grpc.status[r.code] ?? r.code} ${r.errorInfo?.reason ?? r.trailer ?? '(no reason)'}${r.message ? `: ${r.message}` : ''}`;

// No answer is evidence of nothing: the run stops, naming the call.
export const SILENT: readonly grpc.status[] = [grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED];
export const unanswered = (what: string, refusal: Refusal) =>
  new Error(`${what} got no answer (${describeRefusal(refusal)}): is the deployment up?`);

/** The answer's value; Broken if it was refused. */
export function answered<T>(answer: Answer<T>, what: string): T {
  if (answer.ok) return answer.value;
  if (SILENT.includes(answer.refusal.code)) throw unanswered(what, answer.refusal);
  throw new Broken(`${what} was refused: ${describeRefusal(answer.refusal)}`);
}

/** The refusal; Broken unless it has `code` and `reason`. */
export function refused(answer: Answer<unknown>, code: grpc.status, reason: string, what: string): Refusal {
  if (answer.ok)
    throw new Broken(`${what} was answered ${JSON.stringify(answer.value)}, not ${grpc.status[code]} ${reason}`);
  const { refusal } = answer;
  if (SILENT.includes(refusal.code) && !SILENT.includes(code)) throw unanswered(what, refusal);
  const got = refusal.errorInfo?.reason ?? refusal.trailer;
  if (refusal.code !== code || got !== reason) {
    throw new Broken(`${what} was refused ${describeRefusal(refusal)}, not ${grpc.status[code]} ${reason}`);
  }
  return refusal;
}

export function workers(context: CheckContext): readonly [Caller, Caller] {
  return context.wire.deployment.callers.workers;
}

export async function acquire(
  context: CheckContext,
  caller: Caller,
  resource: string,
  requestId = context.fresh('request'),
) {
  return context.wire.coordinator<object, { lease: WireLease | null; replayed: boolean }>(
    'Acquire',
    { request_id: requestId, resource, owner_id: caller.identity, incarnation: '1', ttl_ms: TTL_MS },
    caller,
  );
}

export async function grant(context: CheckContext, caller: Caller, resource: string) {
  const answer = answered(await acquire(context, caller, resource), `Acquire of ${resource}`);
  if (!answer.lease) throw new Broken(`Acquire of ${resource} was answered without a lease`);
  return answer.lease;
}

export async function release(context: CheckContext, caller: Caller, lease: WireLease) {
  return context.wire.coordinator<object, { released: boolean }>(
    'Release',
    { resource: lease.resource, owner_id: caller.identity, incarnation: lease.incarnation, token: lease.token },
    caller,
  );
}

/**
 * The sink that holds a fence for `resource` (P4: only its owner does), and
 * that fence. With no fence at any sink given, the check cannot go on: L3
 * fails on that, and this skips.
 */
export async function owningSink(context: CheckContext, resource: string): Promise<{ index: number; fence: bigint }> {
  const found = await fenceAtSinks(context, resource);
  if (found.fence === 0n) throw new Skip(`no sink given holds a fence for ${resource}: see L3, or give every sink`);
  return found;
}

export async function fenceAtSinks(context: CheckContext, resource: string): Promise<{ index: number; fence: bigint }> {
  const worker = workers(context)[0];
  let found = { index: 0, fence: 0n };
  for (let index = 0; index < context.wire.deployment.sinks.length; index++) {
    const answer = answered(
      await context.wire.sink<object, { fence: string }>('GetFence', { resource }, worker, index),
      `GetFence of ${resource}`,
    );
    const fence = BigInt(answer.fence);
    if (fence > found.fence) found = { index, fence };
  }
  return found;
}

export async function write(
  context: CheckContext,
  caller: Caller,
  resource: string,
  token: string,
  resultId: string,
  payload: string,
  sink = 0,
) {
  return context.wire.sink<object, { outcome: string; fence: string }>(
    'Write',
    { resource, token, result_id: resultId, payload: Buffer.from(payload) },
    caller,
    sink,
  );
}

/** The coordinator identity's caller (AdvanceFence, A1/A4); Skip without one in the credentials. */
export function coordinatorCaller(context: CheckContext): Caller {
  const caller = context.wire.deployment.callers.coordinator;
  if (!caller) throw new Skip('needs a credential of role coordinator in --credentials');
  return caller;
}

/** Skip against --insecure services: the rule is about authenticated callers. */
export function secured(context: CheckContext): void {
  if (workers(context)[0].token === undefined) throw new Skip('needs --credentials: the services run --insecure');
}

export async function advanceFence(
  context: CheckContext,
  caller: Caller,
  resource: string,
  token: string,
  grantId: string,
  sink = 0,
) {
  return context.wire.sink<object, { fence: string }>(
    'AdvanceFence',
    { resource, token, grant_id: grantId, owner_id: workers(context)[0].identity },
    caller,
    sink,
  );
}

/** A TTL the kit waits out (V2's least is 100 ms). */
export const SHORT_TTL_MS = 300;

/** Acquires `resource` with a short TTL, then waits until the coordinator shows it no more (L1); Broken past 10 s. */
export async function expiredLease(context: CheckContext, caller: Caller, resource: string): Promise<WireLease> {
  const answer = answered(
    await context.wire.coordinator<object, { lease: WireLease | null }>(
      'Acquire',
      {
        request_id: context.fresh('request'),
        resource,
        owner_id: caller.identity,
        incarnation: '1',
        ttl_ms: String(SHORT_TTL_MS),
      },
      caller,
    ),
    `Acquire of ${resource} for ${SHORT_TTL_MS} ms`,
  );
  if (!answer.lease) throw new Broken(`Acquire of ${resource} was answered without a lease`);
  const deadline = performance.now() + 10_000;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, SHORT_TTL_MS));
    const described = answered(
      await context.wire.coordinator<object, { lease: WireLease | null }>('Describe', { resource }, caller),
      `Describe of ${resource}`,
    );
    if (!described.lease) return answer.lease;
    if (performance.now() > deadline)
      throw new Broken(`a lease of ${SHORT_TTL_MS} ms on ${resource} was still described 10 s later (L1)`);
  }
}

/** How long a restarted service (or an election) may take to answer again. */
export const ANSWER_WITHIN_MS = 60_000;

/**
 * Runs `command` (one of the --*-restart-cmd flags, named by `flag`) with
 * sh, bounded by ANSWER_WITHIN_MS: Skip when none was given; an Error of the
 * run (not of the rule) when it fails, naming its exit and last stderr line.
 */
export async function restartWith(command: string | undefined, flag: string): Promise<void> {
  if (command === undefined) throw new Skip(`needs ${flag}: a command that SIGKILLs and starts it again`);
  const child = spawn('sh', ['-c', command], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), ANSWER_WITHIN_MS);
  // 'exit', not 'close': a service the command starts in the background may keep its stderr open.
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  child.stderr.destroy();
  if (code !== 0) {
    const last = stderr.trim().split('\n').at(-1) ?? '';
    throw new Error(`${flag} ${code === null ? `was ended by ${signal}` : `exited ${code}`}${last ? `: ${last}` : ''}`);
  }
}

/**
 * The first answer of `call` that is not silence (UNAVAILABLE, DEADLINE_EXCEEDED),
 * asked every 200 ms: a service that restarts, or replicas that elect, answer
 * again within ANSWER_WITHIN_MS, or the run stops naming `what`.
 */
export async function untilAnswered<T>(what: string, call: () => Promise<Answer<T>>): Promise<Answer<T>> {
  const deadline = performance.now() + ANSWER_WITHIN_MS;
  for (;;) {
    const answer = await call();
    if (answer.ok || !SILENT.includes(answer.refusal.code)) return answer;
    if (performance.now() > deadline)
      throw unanswered(`${what}, asked for ${ANSWER_WITHIN_MS / 1000} s,`, answer.refusal);
    await sleep(200);
  }
}

/**
 * grpc.health.v1 Check of `service` at `address`: the status name, the
 * error's code name if it refuses, undefined if it serves no health.
 */
export async function healthOf(context: CheckContext, address: string, service: string): Promise<string | undefined> {
  const { tls, timeoutMs } = context.wire.deployment;
  try {
    return await healthStatus(address, service, timeoutMs, tls);
  } catch (error) {
    const { code } = error as grpc.ServiceError;
    if (code === grpc.status.UNIMPLEMENTED) return undefined;
    if (SILENT.includes(code)) throw new Error(`health of ${address} got no answer: is the deployment up?`);
    return grpc.status[code] ?? String(code);
  }
}

/** Where most sink rules start: worker a holds a fresh resource, and the sink that owns it (P4). */
export async function heldAtSink(
  context: CheckContext,
): Promise<{ a: Caller; resource: string; lease: WireLease; index: number }> {
  const [a] = workers(context);
  const resource = context.fresh('job');
  const lease = await grant(context, a, resource);
  const { index } = await owningSink(context, resource);
  return { a, resource, lease, index };
}
