// What every LeaseStore adapter writes the same way: grants and request
// records as JSON (bigints as decimal strings, so no precision is lost),
// and the ceiling a token reservation stores (L6's reservation blocks).
import { UINT64_MAX } from '@fencer/common';
import type { Grant, RequestRecord } from '../core/model.js';

/** Tokens one durable reservation covers: an Acquire then costs one write, its grant record, not two (issue 11). */
export const RESERVATION_BLOCK = 1_000n;

/**
 * The counter to store when `token` must be reserved and the stored one is
 * below it: the top of a block starting at `token`. Near 2^64−1 a block
 * would pass the maximum, so exactly the token is reserved, and T1's edge
 * stays where it was.
 */
export function reservationCeiling(token: bigint): bigint {
  return token <= UINT64_MAX - RESERVATION_BLOCK + 1n ? token + RESERVATION_BLOCK - 1n : token;
}

/** A grant as stored. */
interface GrantJson {
  resource: string;
  ownerId: string;
  incarnation: string;
  token: string;
  ttlMs: number;
  ended: 'released' | 'fenced' | null;
}

/** A request record as stored. */
interface RequestJson {
  requestId: string;
  resource: string;
  ownerId: string;
  incarnation: string;
  ttlMs: number;
  token: string;
}

export function encodeGrant(grant: Grant): string {
  const json: GrantJson = { ...grant, incarnation: grant.incarnation.toString(), token: grant.token.toString() };
  return JSON.stringify(json);
}

export function decodeGrant(text: string): Grant {
  const json = JSON.parse(text) as GrantJson;
  return { ...json, incarnation: BigInt(json.incarnation), token: BigInt(json.token) };
}

export function encodeRequest(request: RequestRecord): string {
  const json: RequestJson = {
    ...request,
    incarnation: request.incarnation.toString(),
    token: request.token.toString(),
  };
  return JSON.stringify(json);
}

export function decodeRequest(text: string): RequestRecord {
  const json = JSON.parse(text) as RequestJson;
  return { ...json, incarnation: BigInt(json.incarnation), token: BigInt(json.token) };
}

/** The key (LevelDB: in the meta sublevel; etcd: under the prefix) of the sink names recorded at first start (P2). */
export const SINK_NAMES_KEY = 'sinks';

/** The recorded sink names: a JSON array of strings. */
export function decodeSinkNames(text: string): readonly string[] {
  const names = JSON.parse(text) as unknown;
  if (!Array.isArray(names) || !names.every((name) => typeof name === 'string'))
    throw new TypeError(`recorded sink names are not a list of names: ${text}`);
  return names;
}
