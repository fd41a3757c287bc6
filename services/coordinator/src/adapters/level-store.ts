// The LevelDB LeaseStore: one sublevel per kind of key. Reservations, grants
// and TTL changes are synced before they resolve (L3, L6, L4/L7); release and
// fence updates and request collection are not (see LeaseStore for why that is safe).
import type { Level } from 'level';
import { openLevelDb, type RepairOptions } from '@fencer/server-kit';
import type { LeaseStore, StoredResource, StoredState } from '../core/store.js';
import type { Grant, RequestRecord } from '../core/model.js';

const sublevel = (db: Level<string, string>, name: string) =>
  db.sublevel<string, string>(name, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
type Sub = ReturnType<typeof sublevel>;

/** JSON shapes on disk: bigints as decimal strings, so no precision is lost. */
interface GrantJson {
  resource: string;
  ownerId: string;
  incarnation: string;
  token: string;
  ttlMs: number;
  ended: 'released' | 'fenced' | null;
}
interface RequestJson {
  requestId: string;
  resource: string;
  ownerId: string;
  incarnation: string;
  ttlMs: number;
  token: string;
}

/** On-disk layout version, stamped and checked at open (openLevelDb). */
const FORMAT = '1';

const SYNCED = { sync: true } as const;
const UNSYNCED = { sync: false } as const;

/** A LeaseStore in a LevelDB directory (created when missing). One process per directory. */
export class LevelStore implements LeaseStore {
  readonly #counters: Sub;
  readonly #grants: Sub;
  readonly #requests: Sub;

  /** Wraps a Level database with utf8 keys and values; `open` is the way in, tests use this to watch its writes. */
  constructor(private readonly db: Level<string, string>) {
    this.#counters = sublevel(db, 'counter');
    this.#grants = sublevel(db, 'grant');
    this.#requests = sublevel(db, 'request');
  }

  /**
   * Opens (creating) the store in `dir`. Throws StartupError with a one-line
   * reason (see openLevelDb; a damaged directory only opens with `repair`).
   */
  static async open(dir: string, options: RepairOptions = {}): Promise<LevelStore> {
    return new LevelStore(
      await openLevelDb<string>(dir, { service: 'coordinator', format: FORMAT, valueEncoding: 'utf8', ...options }),
    );
  }

  async load(): Promise<StoredState> {
    const counters = new Map<string, bigint>();
    for await (const [resource, token] of this.#counters.iterator()) counters.set(resource, BigInt(token));
    const grants: Grant[] = [];
    for await (const [, value] of this.#grants.iterator()) grants.push(decodeGrant(JSON.parse(value) as GrantJson));
    const requests: RequestRecord[] = [];
    for await (const [, value] of this.#requests.iterator())
      requests.push(decodeRequest(JSON.parse(value) as RequestJson));
    return { counters, grants, requests };
  }

  async loadResource(resource: string): Promise<StoredResource | undefined> {
    // Two reads, not one snapshot: the core calls this under the resource's
    // lock, so no write of this resource can land between them.
    const [counter, grant] = await Promise.all([this.#counters.get(resource), this.#grants.get(resource)]);
    if (counter === undefined && grant === undefined) return undefined;
    return {
      counter: counter === undefined ? 0n : BigInt(counter),
      grant: grant === undefined ? null : decodeGrant(JSON.parse(grant) as GrantJson),
    };
  }

  reserveToken(resource: string, token: bigint): Promise<void> {
    return this.db.batch([{ type: 'put', sublevel: this.#counters, key: resource, value: token.toString() }], SYNCED);
  }

  recordGrant(grant: Grant, request: RequestRecord): Promise<void> {
    return this.db.batch(
      [
        this.#grantPut(grant),
        {
          type: 'put',
          sublevel: this.#requests,
          key: request.requestId,
          value: JSON.stringify(encodeRequest(request)),
        },
      ],
      SYNCED,
    );
  }

  changeTtl(grant: Grant): Promise<void> {
    return this.#putGrant(grant, SYNCED);
  }

  endGrant(grant: Grant): Promise<void> {
    return this.#putGrant(grant, UNSYNCED);
  }

  deleteRequests(requestIds: readonly string[]): Promise<void> {
    return this.db.batch(
      requestIds.map((key) => ({ type: 'del' as const, sublevel: this.#requests, key })),
      UNSYNCED,
    );
  }

  close(): Promise<void> {
    return this.db.close();
  }

  #putGrant(grant: Grant, options: typeof SYNCED | typeof UNSYNCED): Promise<void> {
    return this.db.batch([this.#grantPut(grant)], options);
  }

  #grantPut(grant: Grant) {
    return {
      type: 'put' as const,
      sublevel: this.#grants,
      key: grant.resource,
      value: JSON.stringify(encodeGrant(grant)),
    };
  }
}

function encodeGrant(grant: Grant): GrantJson {
  return { ...grant, incarnation: grant.incarnation.toString(), token: grant.token.toString() };
}

function decodeGrant(json: GrantJson): Grant {
  return { ...json, incarnation: BigInt(json.incarnation), token: BigInt(json.token) };
}

function encodeRequest(request: RequestRecord): RequestJson {
  return { ...request, incarnation: request.incarnation.toString(), token: request.token.toString() };
}

function decodeRequest(json: RequestJson): RequestRecord {
  return { ...json, incarnation: BigInt(json.incarnation), token: BigInt(json.token) };
}
