// P1: which sink owns a resource. Rendezvous (highest-random-weight)
// hashing: every sink name gets a weight for the resource, and the highest
// wins. The owner depends only on the set of names, never on their order or
// on addresses; adding a sink to N moves only the resources the new one now
// wins, about 1/(N+1) of them, and removing one moves only its own.
//
// The weight, so that any implementation can compute the same owner: the
// first 8 bytes, big-endian, of SHA-256 over the UTF-8 bytes of
// `name || 0x00 || resource` (V2 keeps NUL out of both). Equal weights, which
// need a 64-bit collision, go to the name that sorts first.
import { createHash } from 'node:crypto';

/** A sink the coordinator fronts: its name (P1, P2) and address. */
export interface SinkTarget {
  readonly name: string;
  /** HOST:PORT, as the coordinator dials it. */
  readonly address: string;
}

/** The weight of sink `name` for `resource`. */
export function rendezvousWeight(name: string, resource: string): bigint {
  return createHash('sha256').update(`${name}\u0000${resource}`, 'utf8').digest().readBigUInt64BE(0);
}

/** The name among `names` that owns `resource` (P1). RangeError without names. */
export function ownerOf(resource: string, names: readonly string[]): string {
  if (names.length === 0) throw new RangeError('no sink to own a resource');
  let owner = names[0]!;
  let highest = rendezvousWeight(owner, resource);
  for (const name of names.slice(1)) {
    const weight = rendezvousWeight(name, resource);
    if (weight > highest || (weight === highest && name < owner)) [owner, highest] = [name, weight];
  }
  return owner;
}

/** The sink among `sinks` that owns `resource` (P1). RangeError without sinks. */
export function sinkFor(resource: string, sinks: readonly SinkTarget[]): SinkTarget {
  const owner = ownerOf(
    resource,
    sinks.map((sink) => sink.name),
  );
  return sinks.find((sink) => sink.name === owner)!;
}

/**
 * Why `given` may not replace `recorded`, the sink names recorded at first
 * start (P2): which names it adds and which it drops. Undefined when the two
 * sets are equal (addresses may change; names may not, since resources
 * would move between sinks without a fenced hand-over).
 */
export function sinkSetChange(recorded: readonly string[], given: readonly string[]): string | undefined {
  const added = given.filter((name) => !recorded.includes(name)).sort();
  const removed = recorded.filter((name) => !given.includes(name)).sort();
  if (added.length === 0 && removed.length === 0) return undefined;
  return [
    `the sinks differ from those recorded at first start (${[...recorded].sort().join(', ')}):`,
    [
      ...(added.length ? [`${added.join(', ')} added`] : []),
      ...(removed.length ? [`${removed.join(', ')} removed`] : []),
    ].join(', '),
  ]
    .join(' ')
    .concat('; moving resources between sinks needs a fenced hand-over, which this version does not do (P2)');
}
