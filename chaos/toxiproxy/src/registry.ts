// Every proxy by name, and the operations of the API on them (TOXIPROXY-API.md
// §4, §8). Operations run one at a time: a bind or a stop is asynchronous,
// and two requests must never interleave on the same proxy.
import type { Logger } from '@fencer/server-kit';
import { ApiError, proxyNotFound, toxicNotFound } from './errors.js';
import { AddressError, formatTcpAddress, resolveTcpAddress } from './go-net.js';
import { Proxy } from './proxy.js';
import type { ProxyFields } from './proxy-spec.js';
import { decodeNewToxic, decodeToxicUpdate, type ToxicSpec } from './toxic-spec.js';

/** A populate that failed partway: the error, and the proxies applied before it (§8). */
export class PopulateError extends Error {
  override name = 'PopulateError';

  constructor(
    readonly status: ApiError['status'],
    message: string,
    readonly proxies: readonly Proxy[] | null,
  ) {
    super(message);
  }
}

/** An AddressError is the 500 of §2 (raw Go error text); anything else is rethrown. */
function asApiError(error: unknown): ApiError {
  if (error instanceof AddressError) return new ApiError(500, error.message);
  throw error;
}

/** The proxies of one server. Methods throw ApiError with the status and text of §2. */
export class ProxyRegistry {
  private readonly proxies = new Map<string, Proxy>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly log: Logger) {}

  /** Runs `operation` after every operation queued before it. */
  serially<T>(operation: () => Promise<T> | T): Promise<T> {
    const result = this.queue.then(operation);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Every proxy, sorted by name as Go sorts map keys (§4). */
  list(): Proxy[] {
    return [...this.proxies.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The proxy called `name`. Throws 404 `proxy not found`. */
  get(name: string): Proxy {
    const proxy = this.proxies.get(name);
    if (!proxy) throw proxyNotFound();
    return proxy;
  }

  /** Bytes held in memory by every live connection of every proxy. */
  bufferedBytes(): number {
    let total = 0;
    for (const proxy of this.proxies.values()) total += proxy.bufferedBytes();
    return total;
  }

  /** Creates a proxy and starts it unless `enabled` is false. Throws 409 (name taken), 500 (bind); nothing is added then. */
  async create(fields: ProxyFields & { name: string; upstream: string }): Promise<Proxy> {
    if (this.proxies.has(fields.name)) throw new ApiError(409, 'proxy already exists');
    const proxy = new Proxy(fields.name, fields.listen ?? '', fields.upstream, this.log);
    if (fields.enabled ?? true) await proxy.start().catch((error: unknown) => Promise.reject(asApiError(error)));
    this.proxies.set(proxy.name, proxy);
    return proxy;
  }

  /**
   * Updates listen/upstream/enabled (§4): a changed address restarts the
   * proxy (closing its connections), then `enabled` is applied. Throws 404, 500.
   */
  async update(name: string, fields: ProxyFields): Promise<Proxy> {
    const proxy = this.get(name);
    try {
      const listen = fields.listen ?? proxy.listen;
      const upstream = fields.upstream ?? proxy.upstream;
      // Missing fields are the proxy's as it was: a changed address alone restarts it, enabled as before.
      const enabled = fields.enabled ?? proxy.enabled;
      // §4 update: listen is compared after resolution, so `localhost:P` equals `127.0.0.1:P`.
      const resolved = formatTcpAddress(await resolveTcpAddress(listen));
      if (resolved !== proxy.listen || upstream !== proxy.upstream) {
        await proxy.stop();
        proxy.listen = listen;
        proxy.upstream = upstream;
      }
      if (enabled && !proxy.enabled) await proxy.start();
      if (!enabled && proxy.enabled) await proxy.stop();
    } catch (error) {
      throw asApiError(error);
    }
    return proxy;
  }

  /** Stops and forgets a proxy with its toxics. Throws 404. */
  async remove(name: string): Promise<void> {
    const proxy = this.get(name);
    this.proxies.delete(name);
    await proxy.stop();
  }

  /**
   * Applies populate entries in order (§8): new names are created, same
   * listen and upstream are left as they are, others are replaced. Throws
   * PopulateError with the proxies done so far.
   */
  async populate(entries: readonly (ProxyFields & { name: string; upstream: string })[]): Promise<Proxy[]> {
    const done: Proxy[] = [];
    for (const entry of entries) {
      try {
        const existing = this.proxies.get(entry.name);
        if (existing) {
          const listen = formatTcpAddress(await resolveTcpAddress(entry.listen ?? ''));
          if (listen === existing.listen && entry.upstream === existing.upstream) {
            done.push(existing);
            continue;
          }
          await this.remove(entry.name);
        }
        done.push(await this.create(entry));
      } catch (error) {
        const apiError = error instanceof ApiError ? error : asApiError(error);
        throw new PopulateError(apiError.status, apiError.message, done.length === 0 ? null : done);
      }
    }
    return done;
  }

  /** Enables every proxy and removes every toxic (§4 /reset); stops at the first proxy that cannot bind (500). */
  async reset(): Promise<void> {
    for (const proxy of this.proxies.values()) {
      await proxy.start().catch((error: unknown) => Promise.reject(asApiError(error)));
      for (const toxic of proxy.toxics) proxy.removeToxic(toxic);
    }
  }

  /** Adds a toxic to a proxy from a create-toxic body. Throws 404, 400, 409. */
  addToxic(proxyName: string, body: Uint8Array): ToxicSpec {
    const proxy = this.get(proxyName);
    const spec = decodeNewToxic(body, (name) => proxy.toxic(name) !== undefined);
    proxy.addToxic(spec);
    return spec;
  }

  /** The toxic `toxicName` of a proxy. Throws 404 (proxy or toxic). */
  toxic(proxyName: string, toxicName: string): ToxicSpec {
    const toxic = this.get(proxyName).toxic(toxicName);
    if (!toxic) throw toxicNotFound();
    return toxic;
  }

  /** Merges an update body into a toxic and restarts it everywhere. Throws 404, 400. */
  updateToxic(proxyName: string, toxicName: string, body: Uint8Array): ToxicSpec {
    const spec = decodeToxicUpdate(body, this.toxic(proxyName, toxicName));
    this.get(proxyName).updateToxic(spec);
    return spec;
  }

  /** Removes a toxic from a proxy and its live connections. Throws 404. */
  removeToxic(proxyName: string, toxicName: string): void {
    this.get(proxyName).removeToxic(this.toxic(proxyName, toxicName));
  }

  /** Stops every proxy and forgets them all. */
  async close(): Promise<void> {
    const all = [...this.proxies.values()];
    this.proxies.clear();
    await Promise.all(all.map((proxy) => proxy.stop()));
  }
}
