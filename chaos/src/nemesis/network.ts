// Network faults on one link of a cluster, driven only through the
// Toxiproxy HTTP API (toxiproxy-node-client), so the same code works
// against our `fencer toxiproxy` and a real Toxiproxy 2.x (TOXIPROXY_URL).
// Each toxic gets a name of its own, so faults on one link stack, and each
// heal removes only what its own start added.
import { Toxiproxy, type Toxic, type ToxicDirection, type ToxicType } from 'toxiproxy-node-client';
import type { Cluster, ClusterLink } from '@fencer/supervisor';
import { sleep } from '@fencer/client';
import { defineNemesis, type FaultTarget, type Nemesis, type NemesisKind } from './fault.js';

/** One link: a proxy, by the name the Toxiproxy API knows it by. */
export interface LinkTarget {
  readonly toxiproxy: Toxiproxy;
  /** The proxy's name, e.g. a cluster's proxyNames.workersToSink. */
  readonly proxy: string;
}

/** A link of a running cluster, in the Toxiproxy it was created in. */
export function clusterLink(cluster: Pick<Cluster, 'toxiproxy' | 'proxyNames'>, link: ClusterLink): LinkTarget {
  return { toxiproxy: new Toxiproxy(cluster.toxiproxy.url), proxy: cluster.proxyNames[link] };
}

/** Which way a toxic acts: upstream is client to server (requests), downstream server to client (replies). */
export type Direction = ToxicDirection | 'both';

/**
 * Full partition: the proxy is disabled, which closes its live connections
 * and refuses new ones, so callers fail fast (UNAVAILABLE). Heal re-enables
 * it on the same address. The enabled flag is one per proxy: overlapping
 * partitions of one link end at the first heal.
 */
export function partition(link: LinkTarget): Nemesis {
  return disableLinks('partition', { link: link.proxy }, () => [link]);
}

/**
 * Several links partitioned as one fault (kind `kind` on `target`): each
 * proxy disabled, then enabled again at heal. `links` is asked when the
 * fault starts, so it may name what the cluster has only then.
 */
export function disableLinks(kind: NemesisKind, target: FaultTarget, links: () => readonly LinkTarget[]): Nemesis {
  return defineNemesis(kind, target, async () => {
    const cut = links();
    await Promise.all(cut.map((link) => setEnabled(link, false)));
    return {
      detail: `${cut.length === 1 ? 'proxy' : 'proxies'} ${cut.map((link) => link.proxy).join(', ')} disabled`,
      undo: async () => {
        await Promise.all(cut.map((link) => unlessGone(setEnabled(link, true))));
      },
    };
  });
}

/**
 * Blackhole: a `timeout` toxic with timeout 0 on both streams. Connections
 * stay open and every byte either way is dropped, so requests never reach
 * the server and callers see only their deadline (DEADLINE_EXCEEDED).
 * Healing removes the toxics, which closes the connections they held.
 */
export function blackhole(link: LinkTarget): Nemesis {
  return toxicNemesis('blackhole', link, 'timeout 0 (drop everything)', timeoutZero(['upstream', 'downstream']));
}

/**
 * Loss of requests only: a `timeout` toxic with timeout 0 upstream. Requests
 * are dropped on their way in, so the server never applies them, and the
 * caller sees only its deadline (DEADLINE_EXCEEDED) for work never done.
 * Healing closes the connections it held.
 */
export function requestLoss(link: LinkTarget): Nemesis {
  return toxicNemesis('request-loss', link, 'timeout 0 (drop requests)', timeoutZero(['upstream']));
}

/**
 * Isolation of one process: every link to and from it blackholed at once
 * (`timeout` 0 both ways on each), so it can neither reach nor be reached
 * while the rest of the cluster goes on. Toxics rather than disabled
 * proxies, so an isolation stacks with a partition of one of its links and
 * each heal takes back only its own.
 */
export function isolate(name: string, links: readonly LinkTarget[]): Nemesis {
  if (links.length === 0) throw new RangeError(`isolate: ${name} has no links`);
  return toxicsNemesis(
    'isolate',
    { process: name },
    'timeout 0 (drop everything)',
    links.map((link) => ({ link, toxics: timeoutZero(['upstream', 'downstream']) })),
  );
}

/** Options of flap. */
export interface FlapOptions {
  /** How long each partition lasts, ms: shorter than a TTL, so a lease can outlive several. */
  readonly downMs: number;
  /** How long the link is up between two partitions, ms. */
  readonly upMs: number;
}

/** A quarter of the workers' default 1 s TTL each way: a lease sees about two partitions. */
export const DEFAULT_FLAP: FlapOptions = Object.freeze({ downMs: 250, upMs: 250 });

/**
 * Flapping: the link partitioned (as `partition`) and healed over and over,
 * `downMs` off and `upMs` on, until heal() leaves it on. Each partition
 * closes the connections, so callers reconnect into the next one; the
 * record says how many partitions there were.
 */
export function flap(link: LinkTarget, options: FlapOptions): Nemesis {
  return defineNemesis('flap', { link: link.proxy }, async () => {
    await setEnabled(link, false);
    let partitions = 1;
    let failure: unknown;
    const stopped = new AbortController();
    const toggling = (async () => {
      try {
        for (;;) {
          await sleep(options.downMs, stopped.signal);
          await setEnabled(link, true);
          await sleep(options.upMs, stopped.signal);
          await setEnabled(link, false);
          partitions += 1;
        }
      } catch (error) {
        if (!stopped.signal.aborted) failure = error;
      }
    })();
    return {
      detail: `proxy ${link.proxy} disabled ${options.downMs} ms, enabled ${options.upMs} ms, in turn`,
      undo: async () => {
        stopped.abort();
        await toggling;
        await unlessGone(setEnabled(link, true));
        // A toggle that failed ended the flapping early: the record says so.
        const ended = failure === undefined ? '' : ` (stopped early: ${(failure as Error).message})`;
        return `${partitions} partitions${ended}`;
      },
    };
  });
}

/**
 * Loss of replies only: a `timeout` toxic with timeout 0 downstream. Requests
 * pass and are applied; the replies are dropped and the connection stays
 * open, so the caller sees DEADLINE_EXCEEDED for work that was done.
 * (Not `limit_data`: it closes the connection at the first downstream
 * chunk, so the caller sees a fast UNAVAILABLE for a dead connection rather
 * than a reply that never comes; and on a new connection that chunk is the
 * server's HTTP/2 SETTINGS, which races the request on its way in.)
 * Healing closes the connections it held.
 */
export function replyLoss(link: LinkTarget): Nemesis {
  return toxicNemesis('reply-loss', link, 'timeout 0 (drop replies)', timeoutZero(['downstream']));
}

/** Options of latencySpike. */
export interface LatencyOptions {
  /** Added delay per direction, ms: above a lease's TTL for the spike that outlives a lease. */
  readonly latencyMs: number;
  /** Uniform ± jitter around it, ms; default 0. */
  readonly jitterMs?: number;
  /** Default `both`, where the round trip grows by twice latencyMs. */
  readonly direction?: Direction;
}

/** Latency spike: a `latency` toxic per direction. Data is delayed, never dropped; healing flushes what is held. */
export function latencySpike(link: LinkTarget, options: LatencyOptions): Nemesis {
  const jitterMs = options.jitterMs ?? 0;
  const direction = options.direction ?? 'both';
  return toxicNemesis(
    'latency',
    link,
    `latency ${options.latencyMs} ms ± ${jitterMs} ms`,
    streams(direction).map((stream) => ({
      type: 'latency',
      stream,
      attributes: { latency: options.latencyMs, jitter: jitterMs },
    })),
  );
}

/** Options of connectionReset. */
export interface ResetOptions {
  /** How long after the first chunk the connection is cut, ms; default 0 (at once). */
  readonly afterMs?: number;
  /**
   * Default `upstream`: the request that meets the toxic is dropped, so it
   * fails cleanly. Downstream lets it be applied and cuts the reply.
   */
  readonly direction?: Direction;
}

/**
 * Connection resets: a `reset_peer` toxic. The first chunk that meets it is
 * dropped and the connection cut (a TCP RST for connections opened while it
 * is there), so callers see UNAVAILABLE; idle connections stay open.
 */
export function connectionReset(link: LinkTarget, options: ResetOptions = {}): Nemesis {
  const afterMs = options.afterMs ?? 0;
  return toxicNemesis(
    'reset-peer',
    link,
    `reset_peer after ${afterMs} ms`,
    streams(options.direction ?? 'upstream').map((stream) => ({
      type: 'reset_peer',
      stream,
      attributes: { timeout: afterMs },
    })),
  );
}

/** A toxic to add, named by toxicNemesis. */
interface ToxicSpec {
  readonly type: ToxicType;
  readonly stream: ToxicDirection;
  readonly attributes: Readonly<Record<string, number>>;
}

// Toxic names are unique per proxy (409 otherwise); a sequence keeps two
// nemeses of one kind on one link apart.
let toxicSequence = 0;

/** A nemesis that adds `toxics` to the link's proxy on start and removes them on heal. */
function toxicNemesis(kind: NemesisKind, link: LinkTarget, what: string, toxics: readonly ToxicSpec[]): Nemesis {
  return toxicsNemesis(kind, { link: link.proxy }, what, [{ link, toxics }]);
}

/** A nemesis that adds toxics to one or more links' proxies on start and removes them all on heal. */
function toxicsNemesis(
  kind: NemesisKind,
  target: FaultTarget,
  what: string,
  placements: readonly { readonly link: LinkTarget; readonly toxics: readonly ToxicSpec[] }[],
): Nemesis {
  return defineNemesis(kind, target, async () => {
    const added: Toxic<unknown>[] = [];
    const removeAll = async () => {
      await Promise.all(added.map((toxic) => unlessGone(toxic.remove())));
    };
    try {
      for (const { link, toxics } of placements) {
        const proxy = await link.toxiproxy.get(link.proxy);
        for (const toxic of toxics) {
          added.push(
            await proxy.addToxic<unknown>({
              ...toxic,
              name: `${kind}-${toxic.stream}-${++toxicSequence}`,
              toxicity: 1,
            }),
          );
        }
      }
    } catch (error) {
      // Half a fault is not what was asked for: take back what was added.
      await Promise.allSettled(added.map((toxic) => toxic.remove()));
      throw error;
    }
    const where = placements
      .map(({ link, toxics }) => `${toxics.map((toxic) => toxic.stream).join(' and ')} on ${link.proxy}`)
      .join(', ');
    return { detail: `${what} ${where}`, undo: removeAll };
  });
}

/** `timeout` toxics with timeout 0 (drop everything, close nothing) on `directions`. */
function timeoutZero(directions: readonly ToxicDirection[]): ToxicSpec[] {
  return directions.map((stream) => ({ type: 'timeout', stream, attributes: { timeout: 0 } }));
}

/** The streams a direction covers. */
function streams(direction: Direction): ToxicDirection[] {
  return direction === 'both' ? ['upstream', 'downstream'] : [direction];
}

/** Enables or disables a proxy, keeping its listen address and upstream. */
async function setEnabled(link: LinkTarget, enabled: boolean): Promise<void> {
  await updateProxy(link, (proxy) => ({ ...proxy, enabled }));
}

/**
 * Sends a link's connections to another `upstream` (host:port) and resolves
 * with the upstream it had: the proxy closes its live connections and
 * listens on the same address again, so callers reconnect to the new
 * upstream. A disabled proxy stays disabled. Toxiproxy 2.x, like `fencer
 * toxiproxy`, restarts a proxy whose upstream an update changes, on the same
 * listen address and with its toxics.
 */
export async function redirect(link: LinkTarget, upstream: string): Promise<string> {
  let previous = '';
  await updateProxy(link, (proxy) => {
    previous = proxy.upstream;
    return { ...proxy, upstream };
  });
  return previous;
}

/** Updates of proxies from this process, chained per proxy (see updateProxy). */
const updating = new Map<string, Promise<void>>();

/**
 * Reads a proxy and writes back all of `change(fields)`: listen, upstream
 * and enabled (the update body of toxiproxy-node-client carries all three).
 * Updates of one proxy run one at a time, or a partition's read-then-write
 * could undo a redirect made in between, or bring back an upstream a
 * redirect had just taken away.
 */
function updateProxy(
  link: LinkTarget,
  change: (fields: { enabled: boolean; listen: string; upstream: string }) => {
    enabled: boolean;
    listen: string;
    upstream: string;
  },
): Promise<void> {
  const key = `${link.toxiproxy.host}\u0000${link.proxy}`;
  const update = (updating.get(key) ?? Promise.resolve()).then(async () => {
    const proxy = await link.toxiproxy.get(link.proxy);
    await proxy.update(change({ enabled: proxy.enabled, listen: proxy.listen, upstream: proxy.upstream }));
  });
  const settled = update.catch(() => undefined);
  updating.set(key, settled);
  void settled.then(() => {
    if (updating.get(key) === settled) updating.delete(key);
  });
  return update;
}

/**
 * Resolves once `action` succeeded or found its object gone (404): after a
 * Toxiproxy reset or a removed proxy there is nothing left to heal, so heal
 * stays idempotent.
 */
async function unlessGone(action: Promise<unknown>): Promise<void> {
  try {
    await action;
  } catch (error) {
    // toxiproxy-node-client carries the HTTP status only in its message.
    if (!/status code 404$/.test((error as Error).message)) throw error;
  }
}
