// Proxy bodies in (TOXIPROXY-API.md §4 create/update, §8 populate): Go's
// decoding of `{name, listen, upstream, enabled}` and the required fields.
import { ApiError } from './errors.js';
import { decodeStruct, GoJsonError, jsonKindName, unmarshalTypeError, type GoStruct, type GoValue } from './go-json.js';
import { badBody, parseBody } from './toxic-spec.js';

/** The fields a create or populate entry gives; absent ones are undefined. */
export interface ProxyFields {
  readonly name: string | undefined;
  readonly listen: string | undefined;
  readonly upstream: string | undefined;
  readonly enabled: boolean | undefined;
}

const PROXY: GoStruct = {
  name: 'Proxy',
  qualified: 'toxiproxy.Proxy',
  fields: { name: 'string', listen: 'string', upstream: 'string', enabled: 'bool' },
};

function fields(values: Map<string, GoValue>): ProxyFields {
  return {
    name: values.get('name') as string | undefined,
    listen: values.get('listen') as string | undefined,
    upstream: values.get('upstream') as string | undefined,
    enabled: values.get('enabled') as boolean | undefined,
  };
}

/** Decodes a create or update body. Throws ApiError 400. */
export function decodeProxyBody(body: Uint8Array): ProxyFields {
  const node = parseBody(body);
  try {
    return fields(decodeStruct(node, PROXY, { struct: '', path: '' }));
  } catch (error) {
    throw badBody(error);
  }
}

/** A create request checked for its required fields, in the real server's order (§4). Throws ApiError 400. */
export function requireNew(fieldsGiven: ProxyFields, where = ''): ProxyFields & { name: string; upstream: string } {
  const { name, upstream } = fieldsGiven;
  if (!name) throw new ApiError(400, `missing required field: name${where}`);
  if (!upstream) throw new ApiError(400, `missing required field: upstream${where}`);
  return { ...fieldsGiven, name, upstream };
}

/**
 * Decodes a populate body: a JSON array of proxies (null counts as empty),
 * each checked for name and upstream before anything is applied (§8).
 * Throws ApiError 400.
 */
export function decodePopulateBody(body: Uint8Array): (ProxyFields & { name: string; upstream: string })[] {
  const node = parseBody(body);
  if (node.kind === 'null') return [];
  if (node.kind !== 'array') {
    throw badBody(unmarshalTypeError(jsonKindName(node), { struct: '', path: '' }, '[]toxiproxy.Proxy'));
  }
  const entries: ProxyFields[] = [];
  let firstError: GoJsonError | undefined;
  for (const item of node.items) {
    try {
      entries.push(fields(decodeStruct(item, PROXY, { struct: '', path: '' })));
    } catch (error) {
      if (!(error instanceof GoJsonError)) throw error;
      firstError ??= error;
    }
  }
  if (firstError) throw badBody(firstError);
  // §8: `at proxy N` counts from 1.
  return entries.map((entry, index) => requireNew(entry, ` at proxy ${index + 1}`));
}
