// The etcd LeaseStore (H1): the coordinator's durable state as keys under a
// prefix in an etcd cluster that several coordinator replicas share.
//
//   <prefix>format             ETCD_STORE_FORMAT: whose keys these are
//   <prefix>counter/<resource> the highest token reserved (decimal; L6)
//   <prefix>grant/<resource>   the latest grant (JSON, store-records.ts; L7)
//   <prefix>request/<id>       a request record (JSON; R1–R3)
//   <prefix>leader             the election key (etcd-leadership.ts, H2)
//   <prefix>sinks              the sink names (JSON, sorted; P2)
//
// One key per counter, grant and request, as in the LevelDB store, and the
// same reservation blocks (L6): reserving a token below the stored ceiling
// writes nothing. The ceiling is remembered from what this store read and
// wrote (a bounded cache): while the guard holds, no one else writes it.
//
// H3: every write is one etcd transaction whose compare includes the guard
// when given: the leader key still exists with the create revision this
// replica won the election with. A deposed leader's write changes nothing,
// and its store is failed for good with a NotLeaderError as the cause.
// deleteRequests is the one write that may take several transactions
// (etcd's --max-txn-ops, 128 by default, bounds one); each is guarded, and
// a lost delete is redone anyway (R3).
//
// T3, fail-stop, as the LevelDB store: an etcd call that fails or does not
// answer within callTimeoutMs fails the store for good; that call, every
// pending one and every later one reject with the same StoreFailedError,
// and whenFailed resolves. A write that timed out may still have landed:
// it is then like a write made just before a crash (never acknowledged,
// loaded by the next leader; a retry with the same request_id gets it, R1).
//
// Every etcd write is durable once it answers (etcd commits through its
// Raft log, fsynced on a majority), so nothing here is "unsynced". Reads
// are linearizable (etcd's default): load() reads the whole prefix page by
// page at the revision of its first page, one consistent snapshot.
import { Buffer } from 'node:buffer';
import type { Etcd3, ICompare, IKeyValue, IRequestOp } from 'etcd3';
import { NotLeaderError, StoreFailedError } from '@fencer/common';
import { StartupError } from '@fencer/cli-kit';
import type { Logger } from '@fencer/server-kit';
import type { LeaseStore, StoredResource, StoredState } from '../core/store.js';
import type { Grant, RequestRecord } from '../core/model.js';
import {
  decodeGrant,
  decodeRequest,
  decodeSinkNames,
  encodeGrant,
  encodeRequest,
  reservationCeiling,
  SINK_NAMES_KEY,
} from './store-records.js';

/** What `<prefix>format` holds for this layout; another value there is refused at open. */
export const ETCD_STORE_FORMAT = 'fencer-coordinator/1';

/** The default --etcd-prefix. */
export const DEFAULT_ETCD_PREFIX = '/fencer/v1/';

/** The election key under a prefix (H2): written by the leadership adapter, read here only to tell it apart. */
export const LEADER_KEY = 'leader';

/** Operations etcd takes in one transaction by default (--max-txn-ops). */
const MAX_TXN_OPS = 128;
/** Keys per page of load(): well under grpc-js's 4 MiB default message limit at a few hundred bytes a key. */
const LOAD_PAGE_KEYS = 2_000;
/** Counters remembered for reservation blocks; past this, the oldest are forgotten (and read again when needed). */
const CEILING_CACHE_SIZE = 10_000;

/**
 * This replica's leadership (H3): its election key, and the create revision
 * (decimal) the key had when this replica won. A write compares both.
 */
export interface LeadershipGuard {
  readonly key: string;
  readonly createRevision: string;
}

export interface EtcdStoreOptions {
  /** A client the caller owns (close() does not close it). */
  readonly client: Etcd3;
  /** The keys' prefix, ending in '/' (--etcd-prefix). */
  readonly prefix: string;
  /** Absent: writes are unguarded (a single coordinator on etcd, or tests). */
  readonly guard?: LeadershipGuard;
  /** Where the failure that fails the store is logged, once. */
  readonly log?: Logger;
  /** Bound of every etcd call; one that takes longer fails the store. */
  readonly callTimeoutMs: number;
}

const KINDS = ['counter', 'grant', 'request'] as const;
type Kind = (typeof KINDS)[number];

/**
 * An etcd call that got no answer in time: etcd unreachable without a
 * refusal (a partition), or without a quorum, or slow. Worth asking again,
 * unlike an answer that refuses.
 */
export class EtcdTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`etcd did not answer within ${Math.round(timeoutMs)} ms`);
    this.name = 'EtcdTimeoutError';
  }
}

/** A LeaseStore in etcd under one prefix; one per leadership term. */
export class EtcdStore implements LeaseStore {
  readonly #client: Etcd3;
  readonly #prefix: string;
  readonly #guard: readonly ICompare[];
  readonly #log: Logger | undefined;
  readonly #callTimeoutMs: number;
  /** Reserved ceilings known to be stored (insertion order = age). */
  readonly #ceilings = new Map<string, bigint>();
  #failure: StoreFailedError | undefined;
  #closed = false;
  #reportFailure!: (failure: StoreFailedError) => void;
  readonly #failed = new Promise<StoreFailedError>((resolve) => (this.#reportFailure = resolve));

  private constructor(options: EtcdStoreOptions) {
    this.#client = options.client;
    this.#prefix = options.prefix;
    this.#log = options.log;
    this.#callTimeoutMs = options.callTimeoutMs;
    this.#guard = options.guard
      ? [
          {
            key: Buffer.from(options.guard.key, 'utf8'),
            target: 'Create',
            result: 'Equal',
            create_revision: options.guard.createRevision,
          },
        ]
      : [];
  }

  /**
   * Opens the store under `prefix`, stamping an empty prefix with
   * ETCD_STORE_FORMAT (a guarded write). Throws StartupError with one line
   * if the prefix holds another format, or keys without a format stamp (not
   * a coordinator's); StoreFailedError if etcd fails or does not answer, or
   * (cause NotLeaderError) if the guard fails while stamping.
   */
  static async open(options: EtcdStoreOptions): Promise<EtcdStore> {
    if (!options.prefix.endsWith('/'))
      throw new StartupError(`etcd prefix ${JSON.stringify(options.prefix)} must end with '/'`);
    const store = new EtcdStore(options);
    await store.#stamp();
    return store;
  }

  async load(): Promise<StoredState> {
    const counters = new Map<string, bigint>();
    const grants: Grant[] = [];
    const requests: RequestRecord[] = [];
    for await (const kv of this.#scan()) {
      const entry = this.#entry(kv.key);
      if (!entry) continue; // format, leader
      const value = kv.value.toString('utf8');
      if (entry.kind === 'counter') {
        counters.set(entry.id, BigInt(value));
        this.#remember(entry.id, BigInt(value));
      } else if (entry.kind === 'grant') grants.push(decodeGrant(value));
      else requests.push(decodeRequest(value));
    }
    return { counters, grants, requests };
  }

  async loadResource(resource: string): Promise<StoredResource | undefined> {
    // One transaction of two reads: one revision for both.
    const { responses } = await this.#txn([], [this.#rangeOp('counter', resource), this.#rangeOp('grant', resource)]);
    const [counter, grant] = responses.map((response) => response.response_range.kvs[0]?.value.toString('utf8'));
    if (counter !== undefined) this.#remember(resource, BigInt(counter));
    if (counter === undefined && grant === undefined) return undefined;
    return {
      counter: counter === undefined ? 0n : BigInt(counter),
      grant: grant === undefined ? null : decodeGrant(grant),
    };
  }

  async reserveToken(resource: string, token: bigint): Promise<void> {
    let stored = this.#ceilings.get(resource);
    if (stored === undefined) {
      const { responses } = await this.#txn([], [this.#rangeOp('counter', resource)]);
      const value = responses[0]?.response_range.kvs[0]?.value.toString('utf8');
      stored = value === undefined ? 0n : BigInt(value);
    }
    if (stored >= token) {
      this.#remember(resource, stored);
      return; // reserved already, durably: etcd answered it
    }
    const ceiling = reservationCeiling(token);
    await this.#write([this.#putOp('counter', resource, ceiling.toString())]);
    this.#remember(resource, ceiling);
  }

  async recordGrant(grant: Grant, request: RequestRecord): Promise<void> {
    await this.#write([
      this.#putOp('grant', grant.resource, encodeGrant(grant)),
      this.#putOp('request', request.requestId, encodeRequest(request)),
    ]);
  }

  async changeTtl(grant: Grant): Promise<void> {
    await this.#write([this.#putOp('grant', grant.resource, encodeGrant(grant))]);
  }

  async endGrant(grant: Grant): Promise<void> {
    await this.#write([this.#putOp('grant', grant.resource, encodeGrant(grant))]);
  }

  async deleteRequests(requestIds: readonly string[]): Promise<void> {
    for (let from = 0; from < requestIds.length; from += MAX_TXN_OPS)
      await this.#write(
        requestIds
          .slice(from, from + MAX_TXN_OPS)
          .map((id): IRequestOp => ({ request_delete_range: { key: this.#key('request', id) } })),
      );
  }

  whenFailed(): Promise<StoreFailedError> {
    return this.#failed;
  }

  async claimSinkNames(names: readonly string[]): Promise<readonly string[]> {
    const key = Buffer.from(`${this.#prefix}${SINK_NAMES_KEY}`, 'utf8');
    const sorted = [...names].sort();
    // Put if absent, else read: of replicas starting at once, one set wins and
    // every other compares against it. Not guarded: a replica claims the set
    // before it campaigns, and the set is not leader state.
    const { succeeded, responses } = await this.#txn(
      [{ key, target: 'Version', result: 'Equal', version: 0 }],
      [{ request_put: { key, value: Buffer.from(JSON.stringify(sorted), 'utf8') } }],
      [{ request_range: { key } }],
    );
    return succeeded ? sorted : decodeSinkNames(responses[0]!.response_range.kvs[0]!.value.toString('utf8'));
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  /** Stamps an empty prefix with the format, or checks the stamp there (see open). */
  async #stamp(): Promise<void> {
    const formatKey = Buffer.from(`${this.#prefix}format`, 'utf8');
    const { responses, succeeded } = await this.#txn(
      [{ key: formatKey, target: 'Version', result: 'Greater', version: 0 }],
      [{ request_range: { key: formatKey } }],
      // No stamp: is the prefix empty but for the election?
      [
        {
          request_range: {
            key: Buffer.from(this.#prefix, 'utf8'),
            range_end: prefixEnd(this.#prefix),
            keys_only: true,
            limit: 2,
          },
        },
      ],
    );
    const where = `etcd prefix ${this.#prefix}`;
    if (succeeded) {
      const format = responses[0]!.response_range.kvs[0]!.value.toString('utf8');
      if (format !== ETCD_STORE_FORMAT)
        throw new StartupError(
          `${where} holds data of format ${JSON.stringify(format)}; this build reads ${ETCD_STORE_FORMAT}: give another --etcd-prefix`,
        );
      return;
    }
    const leader = `${this.#prefix}${LEADER_KEY}`;
    const foreign = responses[0]!.response_range.kvs.map((kv) => kv.key.toString('utf8')).find((key) => key !== leader);
    if (foreign !== undefined)
      throw new StartupError(
        `${where} holds keys that are not a fencer coordinator's (no format stamp; e.g. ${JSON.stringify(foreign)}): give another --etcd-prefix`,
      );
    // Stamped only if still unstamped: another replica's stamp is as good.
    await this.#write([{ request_put: { key: formatKey, value: Buffer.from(ETCD_STORE_FORMAT, 'utf8') } }], {
      key: formatKey,
      target: 'Version',
      result: 'Equal',
      version: 0,
    });
  }

  /** Every key-value under the prefix, in key order, from one linearizable snapshot. */
  async *#scan(): AsyncGenerator<IKeyValue> {
    let from = Buffer.from(this.#prefix, 'utf8');
    const end = prefixEnd(this.#prefix);
    let revision: string | undefined;
    for (;;) {
      const page = await this.#call(() =>
        this.#client.kv.range(
          { key: from, range_end: end, limit: LOAD_PAGE_KEYS, ...(revision === undefined ? {} : { revision }) },
          this.#callOptions(),
        ),
      );
      revision ??= page.header.revision;
      yield* page.kvs;
      if (!page.more || page.kvs.length === 0) return;
      // The next page starts just after this one's last key.
      from = Buffer.concat([page.kvs[page.kvs.length - 1]!.key, Buffer.from([0])]);
    }
  }

  /** Which counter, grant or request a key is; undefined for the format stamp and the election key. */
  #entry(key: Buffer): { kind: Kind; id: string } | undefined {
    const name = key.toString('utf8').slice(this.#prefix.length);
    const slash = name.indexOf('/');
    const kind = name.slice(0, slash) as Kind;
    return slash > 0 && KINDS.includes(kind) ? { kind, id: name.slice(slash + 1) } : undefined;
  }

  #key(kind: Kind, id: string): Buffer {
    return Buffer.from(`${this.#prefix}${kind}/${id}`, 'utf8');
  }

  #rangeOp(kind: Kind, id: string): IRequestOp {
    return { request_range: { key: this.#key(kind, id) } };
  }

  #putOp(kind: Kind, id: string, value: string): IRequestOp {
    return { request_put: { key: this.#key(kind, id), value: Buffer.from(value, 'utf8') } };
  }

  /** Remembers a stored ceiling, as the newest entry of the bounded cache. */
  #remember(resource: string, ceiling: bigint): void {
    this.#ceilings.delete(resource);
    this.#ceilings.set(resource, ceiling);
    if (this.#ceilings.size > CEILING_CACHE_SIZE) this.#ceilings.delete(this.#ceilings.keys().next().value!);
  }

  /**
   * One guarded write (H3): `ops` in one transaction whose compare is the
   * guard (and `extra`, when given). A failed compare fails the store with a
   * NotLeaderError as the cause, unless it was `extra` that failed.
   */
  async #write(ops: IRequestOp[], extra?: ICompare): Promise<void> {
    const compare = extra ? [...this.#guard, extra] : [...this.#guard];
    const { succeeded } = await this.#txn(compare, ops);
    if (succeeded) return;
    if (extra && (await this.#guardHolds())) return; // only `extra` failed: nothing to do
    throw this.#fail(new NotLeaderError(`this replica's leadership (${this.#guardText()}) is gone: write refused`));
  }

  /** Whether the guard holds now (always, without one). */
  async #guardHolds(): Promise<boolean> {
    if (this.#guard.length === 0) return true;
    return (await this.#txn([...this.#guard], [])).succeeded;
  }

  #guardText(): string {
    const [compare] = this.#guard;
    return compare ? `${compare.key!.toString('utf8')} created at revision ${String(compare.create_revision)}` : '';
  }

  #txn(compare: ICompare[], success: IRequestOp[], failure: IRequestOp[] = []) {
    return this.#call(() => this.#client.kv.txn({ compare, success, failure }, this.#callOptions()));
  }

  #callOptions() {
    // grpc-js deadlines are wall-clock instants; the local timer in #call bounds the call on its own.
    return { deadline: Date.now() + this.#callTimeoutMs };
  }

  /**
   * Runs one etcd call unless the store has failed or closed, bounded by
   * callTimeoutMs; its failure fails the store for good (T3). A call that
   * answers after the store failed meanwhile rejects too.
   */
  async #call<T>(io: () => Promise<T>): Promise<T> {
    if (this.#failure) throw this.#failure;
    if (this.#closed) throw new StoreFailedError('coordinator storage is closed');
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        io(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new EtcdTimeoutError(this.#callTimeoutMs)), this.#callTimeoutMs);
        }),
      ]);
      // Failed meanwhile (another call's failure): this answer is not to be acted on either.
      const failure = this.#failure as StoreFailedError | undefined;
      if (failure) throw failure;
      return result;
    } catch (error) {
      if (error instanceof StoreFailedError) throw error;
      if (this.#closed) throw new StoreFailedError('coordinator storage is closed', { cause: error });
      throw this.#fail(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Fails the store for good with `cause` (the first failure wins), logging it once. */
  #fail(cause: unknown): StoreFailedError {
    if (this.#failure) return this.#failure;
    const deposed = cause instanceof NotLeaderError;
    const failure = new StoreFailedError(
      deposed
        ? `coordinator storage refused a write: ${cause.message}`
        : `coordinator storage failed: ${(cause as Error | undefined)?.message ?? String(cause)}`,
      { cause },
    );
    this.#failure = failure;
    if (deposed) this.#log?.warn({ err: cause }, 'etcd store: leadership lost, store stopped (H3)');
    else this.#log?.error({ err: cause }, 'etcd store: etcd failed, store stopped (T3)');
    this.#reportFailure(failure);
    return failure;
  }
}

/** The end of the key range of every key starting with `prefix` (its last byte plus one, carried). */
function prefixEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix, 'utf8');
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]); // every key: etcd's "from key" range end
}
