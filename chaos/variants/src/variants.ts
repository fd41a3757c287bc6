// The deliberately broken services, each a real `fencer sink` or
// `fencer coordinator` composed through the services' programmatic seams
// with one rule broken. They run only through their own scripts in bin/:
// no flag, environment variable or config field of `fencer` reaches them.
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import { coordinatorCommand } from '@fencer/coordinator';
import { createLogger } from '@fencer/server-kit';
import { SinkEngine, sinkCommand } from '@fencer/sink';
import {
  bareStatuses,
  forgettingGrants,
  forgettingRequests,
  grantFirst,
  lenientDecoding,
  lenientWrite,
  memoryResults,
  overwritingWrite,
  ownerlessWrite,
  revivingRenewals,
  saturatingTokens,
  staleAcceptingWrite,
  withoutRequestRecords,
} from './broken-rules.js';
import { TwoStepEngine } from './two-step-engine.js';
import { expireOnWorkerClock, readWorkerClocks } from './worker-clock.js';

/**
 * The two-step sink's pause between check and commit, in ms. It must
 * outlast an AdvanceFence's fsync (tens of ms on a busy disk), a client's
 * round trip, and in the checker's negative control a short lease running
 * out and a successor's grant, or the stale write lands before anyone can
 * tell. Long, so a loaded machine still shows the bug.
 */
export const TWO_STEP_PAUSE_MS = 1_000;

/**
 * How long the grant-first coordinator holds each AdvanceFence back after
 * granting, in ms: long enough for the old holder to write in between even
 * on a loaded machine.
 */
export const GRANT_FIRST_DELAY_MS = 1_000;

/** One broken variant: the service whose command line it speaks, the rule it breaks, and that command. */
export interface Variant {
  readonly service: 'sink' | 'coordinator';
  readonly breaks: string;
  /** The service's own subcommand (`sink` or `coordinator`) running this variant. */
  command(): Command;
}

/** Every variant by name; each is started by `node bin/<name>.js <service> <that service's flags>`. */
export const VARIANTS = Object.freeze({
  'two-step-sink': {
    service: 'sink',
    breaks: 'F2: checks the fence and stores the result in two steps, with a pause between',
    command: () => sinkCommand({ engine: (store) => new TwoStepEngine(store, () => sleep(TWO_STEP_PAUSE_MS)) }),
  },
  'lenient-sink': {
    service: 'sink',
    breaks: 'F1: accepts token >= fence instead of token == fence',
    command: () => sinkCommand({ engine: (store) => new SinkEngine(store, lenientWrite) }),
  },
  'stale-accepting-sink': {
    service: 'sink',
    breaks: "F1: accepts token <= fence instead of token == fence, so a fenced-out holder's write lands",
    command: () => sinkCommand({ engine: (store) => new SinkEngine(store, staleAcceptingWrite) }),
  },
  'overwriting-sink': {
    service: 'sink',
    breaks: 'F3: a result id already written is written again with another payload (APPLIED), never RESULT_CONFLICT',
    command: () => sinkCommand({ engine: (store) => new SinkEngine(store, overwritingWrite) }),
  },
  'ownerless-sink': {
    service: 'sink',
    breaks:
      "A5: ignores the writer's identity, so a write under the fence's token is accepted from anyone, never OWNER_MISMATCH",
    command: () => sinkCommand({ engine: (store) => new SinkEngine(store, ownerlessWrite) }),
  },
  'bare-errors-sink': {
    service: 'sink',
    breaks:
      'errors: refusals carry their code and message only, with no ErrorInfo in grpc-status-details-bin and no fencing-reason trailer',
    command: () => sinkCommand({ interceptors: [bareStatuses] }),
  },
  'lenient-decoding-sink': {
    service: 'sink',
    breaks:
      "V3: reads a request's bytes as proto-loader does (a field that declares more bytes than follow is taken) before the strict check",
    command: () => sinkCommand({ interceptors: [lenientDecoding] }),
  },
  'forgetful-sink': {
    service: 'sink',
    breaks: 'F6: keeps results in memory only (fences reach LevelDB), so an acknowledged write is gone after a restart',
    command: () => sinkCommand({ engine: (store) => new SinkEngine(memoryResults(store)) }),
  },
  'grant-first-coordinator': {
    service: 'coordinator',
    breaks: `L3: answers Acquire before the sink's fence moved (AdvanceFence sent ${GRANT_FIRST_DELAY_MS} ms later)`,
    command: () => coordinatorCommand({ wrapSink: (sink) => grantFirst(sink, GRANT_FIRST_DELAY_MS) }),
  },
  'no-request-records-coordinator': {
    service: 'coordinator',
    breaks: 'R1: keeps no request-id records, so a retried Acquire can mint a second token (S2)',
    command: () => coordinatorCommand({ wrapCore: withoutRequestRecords }),
  },
  'request-forgetting-coordinator': {
    service: 'coordinator',
    breaks: 'R3: stores request records but does not load them at start, so a retry across a restart is a new request',
    command: () => coordinatorCommand({ wrapStore: forgettingRequests }),
  },
  'grant-forgetting-coordinator': {
    service: 'coordinator',
    breaks:
      'L7: stores grants but does not load them at start (token counters it does), so a held lease is granted to another after a restart',
    command: () => coordinatorCommand({ wrapStore: forgettingGrants }),
  },
  'reviving-coordinator': {
    service: 'coordinator',
    breaks:
      "L4: a Renew of the holder's own expired lease (nobody took over) renews it for a new TTL instead of LEASE_EXPIRED",
    command: () => coordinatorCommand({ wrapRules: revivingRenewals }),
  },
  'wrapping-coordinator': {
    service: 'coordinator',
    breaks:
      'T1: past 2^64−1 the next token stays 2^64−1 instead of TOKEN_SPACE_EXHAUSTED, is sent to the sink again, and the Acquire ends ABORTED FENCE_CONFLICT',
    command: () => coordinatorCommand({ wrapRules: saturatingTokens }),
  },
  'past-leader-lease-coordinator': {
    service: 'coordinator',
    breaks:
      'H2/H5: a replica on etcd serves past its leader lease and through its deposition, until a guarded write fails (H3)',
    command: () => coordinatorCommand({ serveWithoutLeaderLease: true }),
  },
  'unguarded-writes-coordinator': {
    service: 'coordinator',
    breaks:
      'H3: a replica on etcd writes without comparing its election key, so a grant it began while it led lands after its deposition',
    command: () => coordinatorCommand({ unguardedStoreWrites: true }),
  },
  'worker-clock-coordinator': {
    service: 'coordinator',
    breaks:
      "L1: judges whether the lease in force has expired on the acquiring worker's clock (which workers send only when preloaded with workerClockEnv)",
    command: () => {
      readWorkerClocks();
      return coordinatorCommand({ wrapCore: expireOnWorkerClock });
    },
  },
} satisfies Record<string, Variant>);

/** A variant's name. */
export type VariantName = keyof typeof VARIANTS;

/**
 * The script that runs `name` with fencer's command line
 * (`node <script> sink --listen ...`): what `startFencer`'s `bin` and a
 * cluster's `binaries` take. The script runs the package's built dist.
 */
export function variantBin(name: VariantName): string {
  return fileURLToPath(new URL(`../bin/${name}.js`, import.meta.url));
}

/**
 * Parses `argv` (process.argv) as `fencer` would, with the variant's one
 * subcommand only, and runs it; logs a warning naming the broken rule first.
 * Bad flags end as `fencer`'s do: one line and a non-zero exit.
 */
export async function runVariant(name: VariantName, argv: readonly string[]): Promise<void> {
  const variant: Variant = VARIANTS[name];
  const broken = `DELIBERATELY BROKEN ${variant.service}, for negative controls only. ${variant.breaks}`;
  const program = new Command(name)
    .description(broken)
    .addCommand(variant.command().description(broken))
    .hook('preAction', () => {
      createLogger(variant.service).warn({ variant: name }, `deliberately broken variant. ${variant.breaks}`);
    });
  await program.parseAsync(argv);
}
