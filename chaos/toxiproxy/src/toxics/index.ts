// Every toxic type of Toxiproxy 2.12 (TOXIPROXY-API.md §5, §6): its Go
// attribute struct (names and types, in the order responses list them) and
// how to run it on a link.
import type { GoKind } from '../go-json.js';
import { bandwidth } from './bandwidth.js';
import { latency } from './latency.js';
import { limitData } from './limit-data.js';
import { resetPeer } from './reset-peer.js';
import { slicer } from './slicer.js';
import { slowClose } from './slow-close.js';
import { passThrough, type StageContext, type ToxicBehaviour, type ToxicMemory } from './stage.js';
import { timeout } from './timeout.js';

/** The toxic types the API accepts; `down` is not one of them (§5). */
export type ToxicType =
  'latency' | 'bandwidth' | 'slow_close' | 'timeout' | 'reset_peer' | 'slicer' | 'limit_data' | 'noop';

/** Attribute values by name; every attribute of the type is present (missing ones are 0). */
export type Attributes = Readonly<Record<string, number>>;

/** A toxic type: its Go struct (for error texts), its attributes, and its behaviour on one link. */
export interface ToxicDefinition {
  /** Go struct name, used in type-error texts (`TimeoutToxic.attributes.timeout`). */
  readonly struct: string;
  /** Attribute names with their Go types, in response order. */
  readonly fields: Readonly<Record<string, GoKind>>;
  /** True if removing the toxic closes the connections it ran on (timeout, §6.4). */
  readonly closesOnRemove: boolean;
  create(attributes: Attributes, context: StageContext, memory: ToxicMemory): ToxicBehaviour;
}

// Attributes always hold every field of the type (toxicAttributes fills
// zeros), so the lookups below cannot miss.
const attr = (attributes: Attributes, name: string): number => attributes[name] ?? 0;

/** The definition of every toxic type, by type name. */
export const TOXICS: Readonly<Record<ToxicType, ToxicDefinition>> = {
  latency: {
    struct: 'LatencyToxic',
    fields: { latency: 'int64', jitter: 'int64' },
    closesOnRemove: false,
    create: (a, context) => latency({ latency: attr(a, 'latency'), jitter: attr(a, 'jitter') }, context),
  },
  bandwidth: {
    struct: 'BandwidthToxic',
    fields: { rate: 'int64' },
    closesOnRemove: false,
    create: (a, context) => bandwidth({ rate: attr(a, 'rate') }, context),
  },
  slow_close: {
    struct: 'SlowCloseToxic',
    fields: { delay: 'int64' },
    closesOnRemove: false,
    create: (a, context) => slowClose({ delay: attr(a, 'delay') }, context),
  },
  timeout: {
    struct: 'TimeoutToxic',
    fields: { timeout: 'int64' },
    // §6.4: the real toxic's removal hook closes its stage, and so the connection.
    closesOnRemove: true,
    create: (a, context) => timeout({ timeout: attr(a, 'timeout') }, context),
  },
  reset_peer: {
    struct: 'ResetToxic',
    fields: { timeout: 'int64' },
    closesOnRemove: false,
    create: (a, context) => resetPeer({ timeout: attr(a, 'timeout') }, context),
  },
  slicer: {
    struct: 'SlicerToxic',
    fields: { average_size: 'int', size_variation: 'int', delay: 'int' },
    closesOnRemove: false,
    create: (a, context) =>
      slicer(
        { average_size: attr(a, 'average_size'), size_variation: attr(a, 'size_variation'), delay: attr(a, 'delay') },
        context,
      ),
  },
  limit_data: {
    struct: 'LimitDataToxic',
    fields: { bytes: 'int64' },
    closesOnRemove: false,
    create: (a, context, memory) => limitData({ bytes: attr(a, 'bytes') }, context, memory),
  },
  noop: {
    struct: 'NoopToxic',
    fields: {},
    closesOnRemove: false,
    create: (_a, context) => passThrough(context),
  },
};

/** Narrows an API `type` string to a ToxicType. */
export function isToxicType(type: string): type is ToxicType {
  return Object.hasOwn(TOXICS, type);
}
