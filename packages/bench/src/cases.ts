// What `fencer bench` measures, one entry per case: the project's own RPCs
// against real processes, the raw limits they stand on, and etcd's peers of
// them. A case opens once per run with one independent operation per slot
// (the highest concurrency asked for); a measurement at concurrency c runs
// the first c slots in a closed loop. A new case is one more entry in CASES.
// Sink Write across sinks is one case per sink count asked for
// (shardedWriteCase), each with processes of its own, measured at one
// concurrency only.
import { randomUUID } from 'node:crypto';
import { open as openFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Etcd3 } from 'etcd3';
import { Level } from 'level';
import {
  CoordinatorConnection,
  ShardedSinks,
  SinkConnection,
  type SinkRef,
  type WriteFields,
  type WriteReceipt,
} from '@fencer/client';
import { etcdHosts } from '@fencer/supervisor';
import { EchoClient } from './echo.js';
import { BENCH_WORKER, startShards, type Targets } from './targets.js';

/** One operation of a slot; it rejects when the operation did not do what it should. */
export type Operation = () => Promise<void>;

/** A server process whose CPU per operation is reported. */
export interface MeasuredProcess {
  readonly name: string;
  readonly pid: number;
  /** Operations it took so far, when it takes only some of the case's (one sink of several): its CPU is then per operation it took. */
  readonly served?: () => number;
}

/** A case, opened: its slots' operations and what to close afterwards. */
export interface OpenCase {
  /** One per slot; slot i's operation never shares a resource with slot j's. */
  readonly operations: readonly Operation[];
  /** The server processes the operations run in (none for the in-process raw limits). */
  readonly servers: readonly MeasuredProcess[];
  /** Processes the case started for itself, which close() stops. */
  readonly started?: readonly MeasuredProcess[];
  close(): Promise<void>;
}

/** What a case is given to open. */
export interface CaseContext {
  readonly targets: Targets;
  readonly slots: number;
  readonly payload: Buffer;
  /** The run's: aborts a case's own processes' start. */
  readonly signal: AbortSignal;
}

/** One thing the bench measures. */
export interface BenchCase {
  /** Stable name: JSON key, ratio reference, `--cases` value. */
  readonly id: string;
  /** What the tables call it. */
  readonly title: string;
  /** fencer: the project's RPCs; raw: the limits below them; etcd: the peers (skipped without etcd). */
  readonly kind: 'fencer' | 'raw' | 'etcd';
  /** The one concurrency it is measured at, whatever --concurrency says; absent: each of those. */
  readonly concurrency?: number;
  open(context: CaseContext): Promise<OpenCase>;
}

/** Deadline of every fencer and echo call: far above any healthy latency, so a stuck call fails the run rather than hangs it. */
const CALL_TIMEOUT_MS = 10_000;
/** The longest lease the coordinator grants (V2): leases taken for Write and Renew never end during a run. */
const LONG_TTL_MS = 86_400_000;
/** Acquire+Release's lease TTL: the release ends it anyway. */
const CYCLE_TTL_MS = 10_000;

const slots = <T>(count: number, make: (slot: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i));

/** A lease held by BENCH_WORKER: its resource, token, and the sink it names (P3). */
interface HeldLease {
  readonly resource: string;
  readonly token: bigint;
  readonly sink?: SinkRef;
}

/** A lease whose grant named its sink. */
type OwnedLease = HeldLease & { readonly sink: SinkRef };

async function lease(coordinator: CoordinatorConnection, resource: string): Promise<HeldLease> {
  const { lease } = await coordinator.acquire({
    requestId: randomUUID(),
    resource,
    ownerId: BENCH_WORKER,
    incarnation: 1n,
    ttlMs: LONG_TTL_MS,
  });
  return { resource, token: lease.token, ...(lease.sink ? { sink: lease.sink } : {}) };
}

/** A lease per slot, held by BENCH_WORKER, on `${prefix}-${slot}`. */
async function leases(coordinator: CoordinatorConnection, prefix: string, count: number) {
  return Promise.all(slots(count, (slot) => lease(coordinator, `${prefix}-${slot}`)));
}

/** A slot's Write under `held`, a new result id every time (F1, F3, F6: applied and synced), through `send`. */
function writeOperation(
  send: (request: WriteFields) => Promise<WriteReceipt>,
  { resource, token }: HeldLease,
  slot: number,
  payload: Buffer,
): Operation {
  let written = 0;
  return async () => {
    const receipt = await send({ resource, token, resultId: `result-${slot}-${written++}`, payload });
    if (receipt.outcome !== 'applied') throw new Error(`a new result id was ${receipt.outcome}`);
  };
}

const connectionOptions = (targets: Targets) => ({ token: targets.workerToken, callTimeoutMs: CALL_TIMEOUT_MS });
const coordinatorConnection = (targets: Targets) =>
  new CoordinatorConnection({ address: targets.coordinator.ready.address, ...connectionOptions(targets) });

const sinkProcess = (targets: Targets): MeasuredProcess => ({ name: 'sink', pid: targets.sink.child.pid! });
const coordinatorProcess = (targets: Targets): MeasuredProcess => ({
  name: 'coordinator',
  pid: targets.coordinator.child.pid!,
});
const echoProcess = (targets: Targets): MeasuredProcess => ({ name: 'echo', pid: targets.echo.child.pid! });

/**
 * Each slot writes its own resource under its lease's token (or, with
 * `oneResource`, every slot the same resource under one lease) through
 * SinkConnection.write, as the worker library does: a message of the
 * connection's one WriteStream, which every slot shares (as many messages
 * in flight as slots, like the bidi-stream echo that is its floor), or,
 * with `unary`, a unary Write call each.
 */
function sinkWriteCase(id: string, title: string, { oneResource = false, unary = false } = {}): BenchCase {
  return {
    id,
    title,
    kind: 'fencer',
    async open({ targets, slots: count, payload }) {
      const coordinator = coordinatorConnection(targets);
      const sink = new SinkConnection({
        address: targets.sink.ready.address,
        writeStream: !unary,
        ...connectionOptions(targets),
      });
      // Each case holds its own resources' leases: a lease of another case's would be LEASE_HELD (L2).
      const held = await leases(coordinator, id, oneResource ? 1 : count);
      const send = (request: WriteFields) => sink.write(request);
      return {
        operations: slots(count, (slot) => writeOperation(send, held[oneResource ? 0 : slot]!, slot, payload)),
        servers: [sinkProcess(targets)],
        close: async () => {
          coordinator.close();
          sink.close();
        },
      };
    },
  };
}

const sinkWrite = sinkWriteCase('sink-write', 'sink Write (WriteStream message)');

/** The same writes as unary Write calls: what a client of the shared contract alone sends. */
const sinkWriteUnary = sinkWriteCase('sink-write-unary', 'sink Write, unary calls', { unary: true });

/**
 * The same writes, every slot on one resource: all of them meet at that
 * resource's lock (F2), which the issue asks to cost little next to writes
 * spread over as many resources as slots.
 */
const sinkWriteOneResource = sinkWriteCase('sink-write-one-resource', 'sink Write, one resource', {
  oneResource: true,
});

/** The `--cases` id of sink Write across sinks: one case per sink count of `--sinks` (shardedWriteCase). */
export const SHARDED_CASE = 'sink-write-sharded';
/** Writes in flight across the sinks, whatever --concurrency says: enough that each of several sinks has many. */
export const SHARDED_CONCURRENCY = 64;
/** Batches of leases leasesAcrossSinks takes before it gives up on a sink owning its share: many times what hashing needs. */
const MAX_LEASE_BATCHES = 16;

const shardedCaseId = (sinkCount: number) => `${SHARDED_CASE}-${sinkCount}`;
const sinksText = (sinkCount: number) => `${sinkCount} sink${sinkCount === 1 ? '' : 's'}`;

/**
 * A lease per slot, on resources `${prefix}-<n>` chosen so that slot i's
 * is owned by sink `names[i mod N]` (Lease.sink, P3): each sink takes an
 * equal share of the slots. Leases are taken a batch of `count` at a time
 * until each sink owns its share; those past a sink's share stay held,
 * unused, until the case's coordinator stops.
 */
async function leasesAcrossSinks(
  coordinator: CoordinatorConnection,
  prefix: string,
  names: readonly string[],
  count: number,
): Promise<OwnedLease[]> {
  const share = Math.ceil(count / names.length);
  const owned = new Map(names.map((name) => [name, [] as OwnedLease[]]));
  const short = () => names.filter((name) => owned.get(name)!.length < share);
  for (let batch = 0; short().length > 0; batch++) {
    if (batch === MAX_LEASE_BATCHES)
      throw new Error(`after ${batch * count} leases, ${short().join(', ')} still owned fewer than ${share} (P1)`);
    const held = await Promise.all(slots(count, (i) => lease(coordinator, `${prefix}-${batch * count + i}`)));
    for (const { sink, ...granted } of held) {
      if (!sink) throw new Error(`the grant of ${granted.resource} named no sink (P3)`);
      const ofSink = owned.get(sink.name);
      if (!ofSink) throw new Error(`the grant of ${granted.resource} named ${sink.name}, not a sink it was given`);
      if (ofSink.length < share) ofSink.push({ ...granted, sink });
    }
  }
  return slots(count, (slot) => owned.get(names[slot % names.length]!)![Math.floor(slot / names.length)]!);
}

/**
 * Unary Writes across `sinkCount` sinks of the case's own, fronted by a
 * coordinator of its own (P1), SHARDED_CONCURRENCY in flight: each slot
 * writes its own resource at the sink its lease names, found through
 * ShardedSinks as a worker finds it, the slots spread evenly over the
 * sinks. Each sink counts the writes it took, so its CPU is per write it
 * took: with nothing shared between sinks on the write path, it stays flat
 * as sinks are added, and throughput scales with the cores there are.
 */
export function shardedWriteCase(sinkCount: number): BenchCase {
  const id = shardedCaseId(sinkCount);
  return {
    id,
    title: `sink Write across ${sinksText(sinkCount)}`,
    kind: 'fencer',
    concurrency: SHARDED_CONCURRENCY,
    async open({ targets, slots: count, payload, signal }) {
      const shards = await startShards(targets, join(targets.scratch, id), sinkCount, signal);
      const coordinator = new CoordinatorConnection({
        address: shards.coordinator.ready.address,
        ...connectionOptions(targets),
      });
      const sinks = new ShardedSinks(
        shards.sinks.map(
          // Unary, as P1–P4's scaling was measured: each sink's writes are its calls.
          ({ server }) =>
            new SinkConnection({ address: server.ready.address, writeStream: false, ...connectionOptions(targets) }),
        ),
      );
      const close = async () => {
        coordinator.close();
        sinks.close();
        await shards.stop();
      };
      try {
        const names = shards.sinks.map(({ name }) => name);
        const taken = new Map(names.map((name) => [name, 0]));
        const held = await leasesAcrossSinks(coordinator, id, names, count);
        const operations = await Promise.all(
          held.map(async (granted, slot) => {
            const connection = await sinks.owner(granted.resource, granted.sink);
            const write = writeOperation((request) => connection.write(request), granted, slot, payload);
            return async () => {
              await write();
              taken.set(granted.sink.name, taken.get(granted.sink.name)! + 1);
            };
          }),
        );
        const servers: MeasuredProcess[] = [
          { name: 'coordinator', pid: shards.coordinator.child.pid! },
          ...shards.sinks.map(({ name, server }) => ({ name, pid: server.child.pid!, served: () => taken.get(name)! })),
        ];
        return { operations, servers, started: servers, close };
      } catch (error) {
        await close();
        throw error;
      }
    },
  };
}

/**
 * Each slot takes its own resource's lease and gives it back (L3: reserve,
 * AdvanceFence, record; L5) at the coordinator `coordinatorOf` picks, as
 * LeaseStream messages (what the worker library sends) unless `leaseStream`
 * is false.
 */
function acquireReleaseCase(
  id: string,
  title: string,
  kind: BenchCase['kind'],
  coordinatorOf: (targets: Targets) => { address: string; servers: MeasuredProcess[] },
  leaseStream = true,
): BenchCase {
  return {
    id,
    title,
    kind,
    async open({ targets, slots: count }) {
      const { address, servers } = coordinatorOf(targets);
      const coordinator = new CoordinatorConnection({ address, leaseStream, ...connectionOptions(targets) });
      return {
        operations: slots(count, (slot) => {
          // The resources are the case's own: both coordinators fence on the one sink (L3).
          const identity = { resource: `${id}-${slot}`, ownerId: BENCH_WORKER, incarnation: 1n };
          return async () => {
            const { lease } = await coordinator.acquire({ ...identity, requestId: randomUUID(), ttlMs: CYCLE_TTL_MS });
            if (!(await coordinator.release({ ...identity, token: lease.token })))
              throw new Error('Release did not free the lease');
          };
        }),
        servers,
        close: async () => coordinator.close(),
      };
    },
  };
}

const localCoordinator = (targets: Targets) => ({
  address: targets.coordinator.ready.address,
  servers: [coordinatorProcess(targets), sinkProcess(targets)],
});
const acquireRelease = acquireReleaseCase('acquire-release', 'Acquire+Release', 'fencer', localCoordinator);
/** The same cycle as two unary calls: what a client of the shared contract alone pays (issue 23's A/B). */
const acquireReleaseUnary = acquireReleaseCase(
  'acquire-release-unary',
  'Acquire+Release, unary calls',
  'fencer',
  localCoordinator,
  false,
);

/**
 * The same cycle at a coordinator with --store etcd (H1) on the etcd the
 * etcd3 lock cycle runs against: every reservation and record is an etcd
 * transaction under the leader's guard (H3). An 'etcd' case, so it is
 * skipped without etcd like its peer.
 */
const acquireReleaseEtcd = acquireReleaseCase(
  'acquire-release-etcd',
  'Acquire+Release, --store etcd',
  'etcd',
  (targets) => ({
    address: targets.etcdCoordinator!.ready.address,
    servers: [
      { name: 'coordinator', pid: targets.etcdCoordinator!.child.pid! },
      sinkProcess(targets),
      etcdProcess(targets),
    ],
  }),
);

/**
 * Each slot renews its own lease, keeping its TTL (L4: ttl_ms 0), as
 * LeaseStream messages unless `leaseStream` is false.
 */
function renewCase(id: string, title: string, leaseStream: boolean): BenchCase {
  return {
    id,
    title,
    kind: 'fencer',
    async open({ targets, slots: count }) {
      const coordinator = new CoordinatorConnection({
        address: targets.coordinator.ready.address,
        leaseStream,
        ...connectionOptions(targets),
      });
      const held = await leases(coordinator, id, count);
      return {
        operations: held.map(({ resource, token }) => async () => {
          await coordinator.renew({ resource, ownerId: BENCH_WORKER, incarnation: 1n, token, ttlMs: 0 });
        }),
        servers: [coordinatorProcess(targets)],
        close: async () => coordinator.close(),
      };
    },
  };
}
const renew = renewCase('renew', 'Renew', true);
const renewUnary = renewCase('renew-unary', 'Renew, unary calls', false);

/** The payload to the echo server and back, unary: grpc-js's own cost. */
const echoUnary: BenchCase = {
  id: 'echo-unary',
  title: 'raw grpc-js unary echo',
  kind: 'raw',
  async open({ targets, slots: count, payload }) {
    const client = new EchoClient(targets.echo.ready.address, grpc.credentials.createInsecure());
    const call = () =>
      new Promise<void>((resolve, reject) =>
        client.Unary(payload, new grpc.Metadata(), { deadline: Date.now() + CALL_TIMEOUT_MS }, (error) =>
          error ? reject(error) : resolve(),
        ),
      );
    return {
      operations: slots(count, () => call),
      servers: [echoProcess(targets)],
      close: async () => client.close(),
    };
  },
};

/**
 * The payload to the echo server and back over one bidi stream that every
 * slot shares, as many messages in flight as slots: the floor of a streamed
 * write. The server echoes in order, so each echo answers the oldest
 * message still waiting.
 */
const echoStream: BenchCase = {
  id: 'echo-stream',
  title: 'raw grpc-js bidi-stream echo',
  kind: 'raw',
  async open({ targets, slots: count, payload }) {
    const client = new EchoClient(targets.echo.ready.address, grpc.credentials.createInsecure());
    const stream = client.Stream();
    const waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
    let failure: Error | undefined;
    const fail = (error: Error) => {
      failure ??= error;
      for (const waiter of waiting.splice(0)) waiter.reject(failure);
    };
    stream.on('data', () => waiting.shift()?.resolve());
    stream.on('error', fail);
    stream.on('end', () => fail(new Error('the echo stream ended')));
    const send = () =>
      new Promise<void>((resolve, reject) => {
        if (failure) return reject(failure);
        waiting.push({ resolve, reject });
        stream.write(payload);
      });
    return {
      operations: slots(count, () => send),
      servers: [echoProcess(targets)],
      close: async () => {
        failure ??= new Error('closed');
        stream.end();
        client.close();
      },
    };
  },
};

/**
 * Group commit as a durable store does it, in this process: one synced
 * LevelDB batch in flight at a time, and every put that arrives meanwhile
 * goes in the next one. The floor of the sink's F6.
 */
class GroupCommit {
  readonly #db: Level<string, Buffer>;
  #pending: { key: string; value: Buffer; resolve: () => void; reject: (error: unknown) => void }[] = [];
  #committing = false;

  constructor(db: Level<string, Buffer>) {
    this.#db = db;
  }

  put(key: string, value: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ key, value, resolve, reject });
      if (!this.#committing) void this.#commit();
    });
  }

  async #commit(): Promise<void> {
    this.#committing = true;
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0);
      try {
        await this.#db.batch(
          batch.map(({ key, value }) => ({ type: 'put' as const, key, value })),
          { sync: true },
        );
        for (const put of batch) put.resolve();
      } catch (error) {
        for (const put of batch) put.reject(error);
      }
    }
    this.#committing = false;
  }
}

const levelGroupCommit: BenchCase = {
  id: 'leveldb-group-commit',
  title: 'raw LevelDB group commit (sync)',
  kind: 'raw',
  async open({ targets, slots: count, payload }) {
    const db = new Level<string, Buffer>(join(targets.scratch, 'leveldb'), { valueEncoding: 'buffer' });
    await db.open();
    const commits = new GroupCommit(db);
    return {
      operations: slots(count, (slot) => {
        let written = 0;
        return () => commits.put(`result/${slot}/${written++}`, payload);
      }),
      servers: [],
      close: () => db.close(),
    };
  },
};

/** Each slot rewrites its own small file and fdatasyncs it: the cost of one durable write with nothing to share it. */
const fdatasync: BenchCase = {
  id: 'fdatasync',
  title: 'raw fdatasync (small file)',
  kind: 'raw',
  async open({ targets, slots: count, payload }) {
    const files: FileHandle[] = await Promise.all(
      slots(count, (slot) => openFile(join(targets.scratch, `fdatasync-${slot}`), 'w')),
    );
    return {
      operations: files.map((file) => async () => {
        await file.write(payload, 0, payload.length, 0);
        await file.datasync();
      }),
      servers: [],
      close: async () => {
        await Promise.all(files.map((file) => file.close()));
      },
    };
  },
};

function runningEtcd(targets: Targets) {
  if (!targets.etcd) throw new Error('etcd is not running');
  return targets.etcd;
}

function etcdProcess(targets: Targets): MeasuredProcess {
  return { name: 'etcd', pid: runningEtcd(targets).members[0]!.pid };
}

async function etcdClient(targets: Targets): Promise<{ client: Etcd3; server: MeasuredProcess }> {
  // Loaded here, not at start-up: every `fencer` process loads this module, and etcd3 costs each ~0.12 s.
  const { Etcd3 } = await import('etcd3');
  return { client: new Etcd3({ hosts: etcdHosts(runningEtcd(targets).endpoints) }), server: etcdProcess(targets) };
}

/**
 * The honest peer of a fenced Write: a transaction that stores a new result
 * only if the slot's fence key is unchanged since its revision R was read
 * (`If(mod_revision(fence) == R) Then Put(result)`), durable when it answers.
 */
const etcdTxn: BenchCase = {
  id: 'etcd-txn',
  title: 'etcd fenced txn (etcd3)',
  kind: 'etcd',
  async open({ targets, slots: count, payload }) {
    const { client, server } = await etcdClient(targets);
    const fences = await Promise.all(
      slots(count, async (slot) => {
        const key = `fence/${slot}`;
        const put = await client.put(key).value('1').exec();
        return { slot, key, revision: put.header.revision };
      }),
    );
    return {
      operations: fences.map(({ slot, key, revision }) => {
        let written = 0;
        return async () => {
          const txn = await client
            .if(key, 'Mod', '==', revision)
            .then(client.put(`result/${slot}/${written++}`).value(payload))
            .commit();
          if (!txn.succeeded) throw new Error(`the fence key ${key} moved`);
        };
      }),
      servers: [server],
      close: async () => client.close(),
    };
  },
};

/** The peer of Acquire+Release: etcd3's lock (a lease, a create-if-absent txn, then the lease revoked). */
const etcdLock: BenchCase = {
  id: 'etcd-lock',
  title: 'etcd3 lock acquire+release',
  kind: 'etcd',
  async open({ targets, slots: count }) {
    const { client, server } = await etcdClient(targets);
    return {
      operations: slots(count, (slot) => async () => {
        const lock = client.lock(`lock/${slot}`);
        await lock.acquire();
        await lock.release();
      }),
      servers: [server],
      close: async () => client.close(),
    };
  },
};

/** Every case, in the order the tables show them. */
export const CASES: readonly BenchCase[] = Object.freeze([
  sinkWrite,
  sinkWriteUnary,
  sinkWriteOneResource,
  acquireRelease,
  acquireReleaseUnary,
  acquireReleaseEtcd,
  renew,
  renewUnary,
  echoUnary,
  echoStream,
  levelGroupCommit,
  fdatasync,
  etcdTxn,
  etcdLock,
]);

/** Same-run ratios of throughput: numerator case over denominator case, per repetition and concurrency. */
export interface RatioDefinition {
  readonly title: string;
  readonly numerator: string;
  readonly denominator: string;
}

export const RATIOS: readonly RatioDefinition[] = Object.freeze([
  { title: 'sink Write / etcd fenced txn', numerator: 'sink-write', denominator: 'etcd-txn' },
  { title: 'sink Write / raw bidi-stream echo', numerator: 'sink-write', denominator: 'echo-stream' },
  { title: 'sink Write / raw LevelDB group commit', numerator: 'sink-write', denominator: 'leveldb-group-commit' },
  { title: 'Write one resource / many resources', numerator: 'sink-write-one-resource', denominator: 'sink-write' },
  { title: 'sink Write, unary calls / etcd fenced txn', numerator: 'sink-write-unary', denominator: 'etcd-txn' },
  { title: 'sink Write, unary calls / raw unary echo', numerator: 'sink-write-unary', denominator: 'echo-unary' },
  { title: 'sink Write / unary calls', numerator: 'sink-write', denominator: 'sink-write-unary' },
  { title: 'Acquire+Release / etcd3 lock cycle', numerator: 'acquire-release', denominator: 'etcd-lock' },
  {
    title: 'Acquire+Release, unary calls / etcd3 lock cycle',
    numerator: 'acquire-release-unary',
    denominator: 'etcd-lock',
  },
  { title: 'Acquire+Release / unary calls', numerator: 'acquire-release', denominator: 'acquire-release-unary' },
  {
    title: 'Acquire+Release on etcd / etcd3 lock cycle',
    numerator: 'acquire-release-etcd',
    denominator: 'etcd-lock',
  },
  { title: 'Renew / raw unary echo', numerator: 'renew', denominator: 'echo-unary' },
  { title: 'Renew / raw bidi-stream echo', numerator: 'renew', denominator: 'echo-stream' },
  { title: 'Renew, unary calls / raw unary echo', numerator: 'renew-unary', denominator: 'echo-unary' },
]);

/**
 * What the bench is held to (issue 23): a same-run ratio at one
 * concurrency, of throughput (higher is better) or of p50 latency (lower
 * is better), against a bound.
 */
export interface Goal extends RatioDefinition {
  readonly concurrency: number;
  readonly measure: 'throughput' | 'p50';
  /** The ratio must be at least this (throughput) or at most this (p50). */
  readonly bound: number;
}

const ratio = (numerator: string, denominator: string): RatioDefinition =>
  RATIOS.find((r) => r.numerator === numerator && r.denominator === denominator)!;
const lockCycle = ratio('acquire-release', 'etcd-lock');
const fencedTxn = ratio('sink-write', 'etcd-txn');

/**
 * Issue 23's goals, each judged on what a worker sends: the worker library's
 * lease calls and writes go as stream messages (its default), so the Fencer
 * side of each is that path. What a client of the shared contract alone
 * sends, unary calls, is measured in the same run (the `-unary` cases) and
 * its ratios printed among RATIOS, not judged here.
 */
export const GOALS: readonly Goal[] = Object.freeze([
  { ...lockCycle, concurrency: 1, measure: 'throughput', bound: 1.0 },
  { ...lockCycle, concurrency: 64, measure: 'throughput', bound: 1.5 },
  { ...fencedTxn, concurrency: 1, measure: 'throughput', bound: 0.85 },
  { ...fencedTxn, title: 'sink Write p50 / etcd fenced txn p50', concurrency: 1, measure: 'p50', bound: 1.15 },
  { ...fencedTxn, concurrency: 64, measure: 'throughput', bound: 1.2 },
  { ...ratio('renew', 'echo-unary'), concurrency: 64, measure: 'throughput', bound: 0.9 },
  // The WriteStream row: the same case as the Write rows, since the worker library writes on the stream.
  { ...fencedTxn, title: 'WriteStream / etcd fenced txn', concurrency: 64, measure: 'throughput', bound: 3.0 },
] satisfies Goal[]);

/** Sink Write across each sink count over the fewest of `sinkCounts`, measured side by side: the scaling factor. */
export function shardedRatios(sinkCounts: readonly number[]): RatioDefinition[] {
  const [fewest, ...more] = [...sinkCounts].sort((a, b) => a - b);
  if (fewest === undefined) return [];
  return more.map((count) => ({
    title: `Write across ${sinksText(count)} / ${sinksText(fewest)}`,
    numerator: shardedCaseId(count),
    denominator: shardedCaseId(fewest),
  }));
}
