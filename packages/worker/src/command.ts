// `fencer worker`: a worker process built on @fencer/client. Looping, it
// does what a task worker does (acquire, work in steps, write each step's
// result under its token, release, again); with --mix it runs the steps a
// seeded generator draws from a named mix (what the chaos soak runs); with
// --commands it does one step per line of stdin, which is how the demo
// tells a story with it.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Command, Option } from 'commander';
import { LeaseHeldError, sleep, UnavailableError } from '@fencer/client';
import {
  clientTls,
  ConfigError,
  configuredCommand,
  hostPortList,
  nonNegativeInteger,
  positiveInteger,
  readTokenFile,
  tlsOptions,
  whenParentGone,
  type TlsFlags,
} from '@fencer/cli-kit';
import { emit } from './events.js';
import { MIXES, OperationGenerator, type MixName } from './generator.js';
import { WorkerSession, type WorkerConfig } from './session.js';
import { inSpan } from './spans.js';

// `acquire REQUEST_ID` retries an earlier acquisition by hand (R1); `forge`
// writes under a token of its own choosing: a buggy or hostile worker;
// `clock PROBE` is answered in every mode (see the `clock` event).
const COMMANDS =
  'acquire [REQUEST_ID] | write ID PAYLOAD | forge TOKEN ID PAYLOAD | read ID | describe | release | clock PROBE | exit';

/** Everything `fencer worker` runs with. */
export interface WorkerCommandConfig {
  readonly worker: WorkerConfig;
  /** Read one command per stdin line instead of looping. */
  readonly commands: boolean;
  /** Run the steps drawn from this mix with `seed` instead of looping; `stepMs` is the mean think time before each. */
  readonly mix?: MixName;
  readonly seed: number;
  /** Loop: results written per lease, think time before each, leases to hold (0: until stopped). */
  readonly steps: number;
  readonly stepMs: number;
  readonly rounds: number;
  /** Where the worker's spans go (`--trace-file`); tracing may also be asked for by the OTEL_* variables. */
  readonly traceFile?: string;
}

/** Started tracing; `shutdown` exports what is still buffered. */
export interface WorkerTracing {
  shutdown(): Promise<void>;
}

/** What `fencer worker` is given by the program that assembles it. */
export interface WorkerCommandSeams {
  /**
   * Starts tracing for this process, spans to `traceFile` or as the OTEL_*
   * variables ask; undefined when neither asks (server-kit's startTracing,
   * which a worker may not import itself).
   */
  readonly startTracing: (traceFile: string | undefined) => Promise<WorkerTracing | undefined>;
}

/** `fencer worker`. */
export function workerCommand(seams: WorkerCommandSeams): Command {
  return configuredCommand(
    new Command('worker').description(
      'a worker built on @fencer/client: acquire a lease, write results under its token, renew, release; prints one JSON event per line',
    ),
    [
      new Option(
        '--coordinator <host:port,...>',
        'the coordinator (or its proxy); several replicas comma-separated, in the order to try them (H7)',
      )
        .argParser(hostPortList)
        .makeOptionMandatory()
        .env('FENCER_WORKER_COORDINATOR'),
      new Option(
        '--sink <host:port,...>',
        'the sink (or its proxy); with sinks sharded by resource, each of them, comma-separated: writes go to the one that owns the resource (P3)',
      )
        .argParser(hostPortList)
        .makeOptionMandatory()
        .env('FENCER_WORKER_SINK'),
      new Option('--owner <id>', 'owner id; with credentials, the identity of the token or client certificate')
        .makeOptionMandatory()
        .env('FENCER_WORKER_OWNER'),
      new Option('--resource <name>', 'the resource to work on').default('task-1').env('FENCER_WORKER_RESOURCE'),
      new Option('--ttl-ms <n>', 'lease TTL asked for')
        .default(2_000)
        .argParser(positiveInteger)
        .env('FENCER_WORKER_TTL_MS'),
      new Option('--token-file <file>', "file holding this worker's bearer token").env('FENCER_WORKER_TOKEN_FILE'),
      new Option('--insecure', 'send no bearer token (services run with --insecure)').env('FENCER_WORKER_INSECURE'),
      ...tlsOptions('client', 'FENCER_WORKER'),
      new Option('--call-timeout-ms <n>', 'deadline of each call').default(1_000).argParser(positiveInteger),
      new Option(
        '--unary-writes',
        "write results as unary Write calls instead of messages of the sink's WriteStream (one long-lived call), as a client of the shared contract alone does",
      ).env('FENCER_WORKER_UNARY_WRITES'),
      new Option('--commands', `do one command per stdin line: ${COMMANDS}`),
      new Option(
        '--mix <name>',
        `instead of looping, run until stopped the calls a seeded generator draws from a mix: ${Object.entries(MIXES)
          .map(([name, mix]) => `${name} (${mix.description})`)
          .join('; ')}`,
      )
        .choices(Object.keys(MIXES))
        .conflicts('commands'),
      new Option(
        '--seed <n>',
        "--mix: the generator's seed; the same seed, given the same answers, draws the same calls",
      )
        .default(0)
        .argParser(nonNegativeInteger),
      new Option('--steps <n>', 'loop: results written per lease').default(5).argParser(positiveInteger),
      new Option('--step-ms <n>', 'loop: work time before each result; --mix: mean think time before each call')
        .default(500)
        .argParser(positiveInteger),
      new Option('--rounds <n>', 'loop: leases to hold before exiting; 0 runs until stopped')
        .default(0)
        .argParser((value) => (value === '0' ? 0 : positiveInteger(value))),
      new Option(
        '--trace-file <file>',
        'append OpenTelemetry spans to this file as JSON lines: a span per step, a `task` span per loop round (without it, the OTEL_* variables may export them over OTLP)',
      ).env('FENCER_WORKER_TRACE_FILE'),
    ],
    (
      options: TlsFlags & {
        coordinator: readonly string[];
        sink: readonly string[];
        owner: string;
        resource: string;
        ttlMs: number;
        tokenFile?: string;
        insecure?: boolean;
        callTimeoutMs: number;
        unaryWrites?: boolean;
        commands?: boolean;
        mix?: MixName;
        seed: number;
        steps: number;
        stepMs: number;
        rounds: number;
        traceFile?: string;
      },
    ): WorkerCommandConfig => {
      // A2: a bearer token, or under mutual TLS a client certificate, names
      // the worker; sending neither must be asked for.
      if (options.tokenFile !== undefined && options.insecure === true) {
        throw new ConfigError('--token-file and --insecure exclude each other: choose one');
      }
      if (options.tokenFile === undefined && options.insecure !== true && options.tlsCert === undefined) {
        throw new ConfigError('give --token-file FILE, a client certificate (--tls-cert, --tls-key) or --insecure');
      }
      const tls = clientTls(options);
      return Object.freeze({
        worker: Object.freeze({
          coordinators: options.coordinator,
          sinks: options.sink,
          ownerId: options.owner,
          resource: options.resource,
          ttlMs: options.ttlMs,
          callTimeoutMs: options.callTimeoutMs,
          unaryWrites: options.unaryWrites === true,
          ...(options.tokenFile === undefined ? {} : { token: readTokenFile(options.tokenFile) }),
          ...(tls === undefined ? {} : { tls }),
        }),
        commands: options.commands === true,
        ...(options.mix === undefined ? {} : { mix: options.mix }),
        seed: options.seed,
        steps: options.steps,
        stepMs: options.stepMs,
        rounds: options.rounds,
        ...(options.traceFile === undefined ? {} : { traceFile: options.traceFile }),
      });
    },
    (config) => runWorker(config, seams),
  );
}

async function runWorker(config: WorkerCommandConfig, seams: WorkerCommandSeams): Promise<void> {
  const tracing = await seams.startTracing(config.traceFile);
  const session = new WorkerSession(config.worker);
  let closing: Promise<void> | undefined;
  // A stopped worker releases what it holds, so a successor need not wait
  // out the TTL, and exports the spans it still buffers.
  const stop = () => {
    closing ??= session
      .close()
      .then(() => tracing?.shutdown())
      .then(() => process.exit(0));
    return closing;
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  emit({
    event: 'ready',
    service: 'worker',
    owner: config.worker.ownerId,
    address: config.worker.coordinators.join(','),
  });
  if (config.commands) {
    await runCommands(session);
  } else {
    whenParentGone(() => void stop());
    // Answered as they come, beside the loop: a probe's round trip must not wait on a call.
    createInterface({ input: process.stdin }).on('line', (line) => {
      const [verb, probe = ''] = line.trim().split(/\s+/);
      if (verb === 'clock') emit({ event: 'clock', probe });
    });
    await (config.mix === undefined ? runLoop(session, config) : runMix(session, config, config.mix));
  }
  await stop();
}

/** One command per stdin line, in order; end of input ends the worker. */
async function runCommands(session: WorkerSession): Promise<void> {
  for await (const line of createInterface({ input: process.stdin })) {
    const [verb = '', first = '', ...rest] = line.trim().split(/\s+/);
    switch (verb) {
      case '':
        break;
      case 'acquire':
        await session.acquire(first || undefined);
        break;
      case 'write':
        await session.write(first, rest.join(' '));
        break;
      case 'forge': {
        const [resultId = '', ...payload] = rest;
        if (!/^[1-9][0-9]*$/.test(first)) emit({ event: 'error', message: `forge: "${first}" is not a token` });
        else await session.forge(BigInt(first), resultId, payload.join(' '));
        break;
      }
      case 'read':
        await session.read(first);
        break;
      case 'release':
        await session.release();
        break;
      case 'describe':
        await session.describe();
        break;
      case 'clock':
        emit({ event: 'clock', probe: first });
        break;
      case 'exit':
        return;
      default:
        emit({
          event: 'error',
          message: `unknown command "${verb}": ${COMMANDS}`,
        });
    }
  }
}

/** Acquire, work `steps` steps writing each result, release; again, `rounds` times or forever. */
async function runLoop(session: WorkerSession, config: WorkerCommandConfig): Promise<void> {
  const owner = config.worker.ownerId;
  // One request id per acquisition (R4): kept for the next attempt while the
  // last one's outcome is unknown (UNAVAILABLE, NOT_LEADER through a
  // failover longer than the keeper's retries: it may have been granted).
  let requestId: string | undefined;
  for (let round = 1; config.rounds === 0 || round <= config.rounds;) {
    const id = (requestId ??= randomUUID());
    // One task: acquire, the steps, release; traced, one span above them.
    const acquired = await inSpan('task', { 'fencer.resource': config.worker.resource }, async () => {
      const held = await session.acquire(id);
      if (!held.ok) return held;
      const keeper = held.value;
      for (let step = 1; step <= config.steps && !keeper.signal.aborted; step++) {
        const worked = await sleep(config.stepMs, keeper.signal).then(
          () => true,
          () => false, // the lease was lost mid-step: stop this work
        );
        if (!worked) break;
        const written = await session.write(`${owner}-${keeper.token}-${step}`, `${owner}@${keeper.token}#${step}`);
        if (!written.ok) break;
      }
      if (!keeper.signal.aborted) await session.release();
      return held;
    });
    if (!(!acquired.ok && acquired.error instanceof UnavailableError)) requestId = undefined;
    if (!acquired.ok) {
      // Held by someone else: look again before their lease would end (they
      // may release it early), with jitter so waiting workers do not collide.
      const heldMs = acquired.error instanceof LeaseHeldError ? (acquired.error.remainingMs ?? 0) : 0;
      await sleep(Math.min(heldMs, config.stepMs * config.steps) * Math.random() + config.stepMs);
      continue;
    }
    round++;
    // Between tasks: without a pause, the releasing worker would win every next Acquire.
    await sleep(config.stepMs * config.steps * Math.random());
  }
}

/**
 * The generator's steps, one after another with think time between, until
 * stopped. Writes go through the session's FencedWriter whether or not the
 * library believes the lease lost (its first attempt is always sent), so a
 * stale write reaches the sink, which alone must refuse it (F1).
 */
async function runMix(session: WorkerSession, config: WorkerCommandConfig, mix: MixName): Promise<never> {
  const generator = new OperationGenerator(MIXES[mix], {
    seed: config.seed,
    owner: config.worker.ownerId,
    ttlMs: config.worker.ttlMs,
  });
  let requestId = '';
  for (;;) {
    await sleep(2 * config.stepMs * Math.random());
    const keeper = session.keeper;
    const step = generator.next(keeper !== undefined && !keeper.signal.aborted, keeper?.token);
    switch (step.kind) {
      case 'acquire':
      case 'reacquire': {
        if (step.kind === 'acquire') requestId = randomUUID();
        const acquired = await session.acquire(requestId);
        // Held by someone else: look again at some point before their lease would end.
        if (!acquired.ok && acquired.error instanceof LeaseHeldError)
          await sleep(Math.min(acquired.error.remainingMs ?? 0, config.worker.ttlMs) * Math.random());
        break;
      }
      case 'renew':
        await session.renew();
        break;
      case 'release':
        await session.release();
        break;
      case 'write':
        if (step.pauseMs > 0) freeze(step.pauseMs);
        // A twin goes out beside it, so the two reach the sink together (F2).
        await Promise.all([
          session.write(step.resultId, step.payload),
          ...(step.twin === undefined ? [] : [session.write(step.resultId, step.twin)]),
        ]);
        break;
      case 'read':
        await session.read(step.resultId);
        break;
      case 'get-fence':
        await session.getFence();
        break;
    }
  }
}

/**
 * Stops this whole process for `ms`, timers and sockets included, as a GC
 * pause or SIGSTOP would: the lease keeper can neither renew nor notice its
 * deadline pass, so the write that follows carries a token the library
 * still believes in while a successor may hold the next one.
 */
function freeze(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
