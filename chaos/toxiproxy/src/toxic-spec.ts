// Toxic bodies in and out (TOXIPROXY-API.md §5, §4 update toxic): defaults,
// the order of checks, the two decoding passes, and the JSON shape.
import { ApiError } from './errors.js';
import {
  decodeStruct,
  float32Number,
  GoJsonError,
  parseFirstValue,
  type GoStruct,
  type GoValue,
  type JsonNode,
} from './go-json.js';
import { isToxicType, TOXICS, type Attributes, type ToxicType } from './toxics/index.js';

/** Which way a toxic acts: upstream = client → server bytes, downstream = server → client. */
export type Direction = 'upstream' | 'downstream';

/** A toxic as the API knows it; immutable, an update makes a new one. */
export interface ToxicSpec {
  readonly name: string;
  readonly type: ToxicType;
  /** The stream string exactly as sent (`UPSTREAM` stays `UPSTREAM`, §5). */
  readonly stream: string;
  readonly direction: Direction;
  /** Probability per link that the toxic acts; not range-checked (§5). */
  readonly toxicity: number;
  readonly attributes: Attributes;
}

/** The JSON object for a toxic, keys in the real server's order (§5). */
export function toxicJson(spec: ToxicSpec): Record<string, unknown> {
  return {
    attributes: spec.attributes,
    name: spec.name,
    type: spec.type,
    stream: spec.stream,
    toxicity: float32Number(spec.toxicity),
  };
}

const WRAPPER: GoStruct = {
  name: 'ToxicWrapper',
  qualified: 'toxics.ToxicWrapper',
  fields: { name: 'string', type: 'string', stream: 'string', toxicity: 'float32' },
};

/** Parses a body as Go would, turning a refusal into 400 `bad request body: ...`. */
export function parseBody(body: Uint8Array): JsonNode {
  try {
    return parseFirstValue(body);
  } catch (error) {
    throw badBody(error);
  }
}

/** Wraps a GoJsonError as the 400 every handler returns for it; rethrows anything else. */
export function badBody(error: unknown): ApiError {
  if (error instanceof GoJsonError) return new ApiError(400, `bad request body: ${error.message}`);
  throw error;
}

function decodeAttributes(node: JsonNode | undefined, type: ToxicType): Map<string, GoValue> {
  if (node === undefined) return new Map();
  const definition = TOXICS[type];
  const struct = { name: definition.struct, qualified: `toxics.${definition.struct}`, fields: definition.fields };
  return decodeStruct(node, struct, { struct: 'ToxicWrapper', path: 'attributes' });
}

/** Every attribute of `type`, from `base` overlaid with `given`. */
function attributesOf(type: ToxicType, base: Attributes, given: Map<string, GoValue>): Attributes {
  const attributes: Record<string, number> = {};
  for (const field of Object.keys(TOXICS[type].fields)) {
    const value = given.get(field);
    attributes[field] = typeof value === 'number' ? value : (base[field] ?? 0);
  }
  return Object.freeze(attributes);
}

/**
 * Decodes a create-toxic body, in the real server's order of checks: body
 * (400), stream (400), type (400), name taken (409), attribute types (400).
 * Throws ApiError.
 */
export function decodeNewToxic(body: Uint8Array, nameTaken: (name: string) => boolean): ToxicSpec {
  const node = parseBody(body);
  let attributesNode: JsonNode | undefined;
  let wrapper: Map<string, GoValue>;
  try {
    wrapper = decodeStruct(
      node,
      WRAPPER,
      { struct: '', path: '' },
      {
        attributes: (value) => {
          attributesNode = value;
          // The first pass only learns the type; attributes are an empty struct then.
          decodeStruct(
            value,
            { name: 'NoopToxic', qualified: 'toxics.NoopToxic', fields: {} },
            {
              struct: 'ToxicWrapper',
              path: 'attributes',
            },
          );
        },
      },
    );
  } catch (error) {
    throw badBody(error);
  }
  const stream = (wrapper.get('stream') as string | undefined) ?? 'downstream';
  const direction = stream.toLowerCase();
  if (direction !== 'upstream' && direction !== 'downstream') {
    throw new ApiError(400, 'stream was invalid, can be either upstream or downstream');
  }
  const type = (wrapper.get('type') as string | undefined) ?? '';
  // §5: the default name uses the stream string as sent (latency_UPSTREAM).
  const name = (wrapper.get('name') as string | undefined) || `${type}_${stream}`;
  if (!isToxicType(type)) throw new ApiError(400, 'invalid toxic type');
  if (nameTaken(name)) throw new ApiError(409, 'toxic already exists');
  let attributes: Map<string, GoValue>;
  try {
    attributes = decodeAttributes(attributesNode, type);
  } catch (error) {
    throw badBody(error);
  }
  return Object.freeze({
    name,
    type,
    stream,
    direction,
    toxicity: (wrapper.get('toxicity') as number | undefined) ?? 1,
    attributes: attributesOf(type, {}, attributes),
  });
}

/**
 * Applies an update body to `current`: given attributes overwrite, the rest
 * stay (a merge, §4); toxicity changes only if given; name, type and stream
 * are ignored. Throws ApiError (400).
 */
export function decodeToxicUpdate(body: Uint8Array, current: ToxicSpec): ToxicSpec {
  const node = parseBody(body);
  let attributes = new Map<string, GoValue>();
  let wrapper: Map<string, GoValue>;
  try {
    wrapper = decodeStruct(
      node,
      WRAPPER,
      { struct: '', path: '' },
      {
        attributes: (value) => {
          attributes = decodeAttributes(value, current.type);
        },
      },
    );
  } catch (error) {
    throw badBody(error);
  }
  return Object.freeze({
    ...current,
    toxicity: (wrapper.get('toxicity') as number | undefined) ?? current.toxicity,
    attributes: attributesOf(current.type, current.attributes, attributes),
  });
}
