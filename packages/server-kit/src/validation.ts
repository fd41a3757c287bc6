// V1/V2: every request is checked field by field before it touches state.
// All violations are collected so one answer names every bad field.
import { UINT64_MAX } from '@fencer/common';
import type { FieldViolation } from '@fencer/proto';
import { Failure } from './failure.js';

/** V2's limits; each is configurable. */
export interface Limits {
  /** Max UTF-8 bytes of resource, owner_id, result_id, request_id, grant_id. */
  readonly maxIdBytes: number;
  /** Inclusive TTL bounds of Acquire and Renew. */
  readonly minTtlMs: number;
  readonly maxTtlMs: number;
  /** Max bytes of a Write's payload. */
  readonly maxPayloadBytes: number;
}

/** The protocol's defaults (V2): 512-byte ids, TTLs of 100 ms to 24 h, 1 MiB payloads. */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxIdBytes: 512,
  minTtlMs: 100,
  maxTtlMs: 86_400_000,
  maxPayloadBytes: 1024 * 1024,
});

// C0, DEL and C1 controls: they break logs, keys and terminals.
const CONTROL_CHARACTER = /\p{Cc}/u;
// Format (Cf: bidi controls such as U+202E, zero-width characters, U+FEFF)
// and line or paragraph separators (Zl, Zp): invisible or reordering, they
// let an id that looks like another be a different key, and they disguise
// or break the lines of every log and message that echoes an id.
const INVISIBLE_CHARACTER = /[\p{Cf}\p{Zl}\p{Zp}]/u;
// Noncharacters, U+FDD0..U+FDEF and the last two code points of every plane
// (U+FFFE, U+FFFF, U+1FFFE ... U+10FFFF), are reserved for a program's
// internal use (sentinels, end markers): a tool on an id's way may replace,
// drop or stop at one, so the id would not come back byte for byte. U+FFFE
// is also a byte order mark read in the wrong order.
const NONCHARACTER = /\p{Noncharacter_Code_Point}/u;
const BLANK = /^\p{White_Space}+$/u;
// Ids are compared byte for byte: "job-7 " is another resource than "job-7",
// with a lease and a fence of its own, yet it reads the same wherever it is
// printed. Whitespace around an id is nearly always a slip of a config file
// or of a shell's quoting, so it is refused; trimming it instead would change
// the key without a word.
const EDGE_WHITESPACE = /^\p{White_Space}|\p{White_Space}$/u;

/**
 * Collects field violations of one request. Each method returns the parsed
 * value (a placeholder when invalid); `done()` throws INVALID_FIELD naming
 * every bad field, so a handler never acts on a partly valid request.
 */
export class RequestCheck {
  readonly #violations: FieldViolation[] = [];

  constructor(private readonly limits: Limits = DEFAULT_LIMITS) {}

  /**
   * An identifier: 1..maxIdBytes bytes of UTF-8 without control, format or
   * line/paragraph separator characters (general categories Cc, Cf, Zl, Zp)
   * or noncharacters, not only whitespace and neither beginning nor ending
   * with whitespace (spaces inside are allowed).
   */
  id(field: string, value: string): string {
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes === 0) this.#violate(field, 'must not be empty');
    else if (bytes > this.limits.maxIdBytes)
      this.#violate(field, `must be at most ${this.limits.maxIdBytes} bytes of UTF-8, got ${bytes}`);
    else if (CONTROL_CHARACTER.test(value)) this.#violate(field, 'must not contain control characters');
    else if (INVISIBLE_CHARACTER.test(value))
      this.#violate(field, 'must not contain format or separator characters (bidi controls, zero-width, U+2028/9)');
    // grpc-js decodes invalid UTF-8 into U+FFFD, so the two cannot be told
    // apart after decoding; refusing U+FFFD keeps ids byte-exact across
    // clients, at the cost of ids that contain a literal replacement char.
    else if (value.includes('\uFFFD')) this.#violate(field, 'must be valid UTF-8 (U+FFFD is refused)');
    else if (NONCHARACTER.test(value))
      this.#violate(field, 'must not contain Unicode noncharacters (U+FDD0..U+FDEF, or U+nFFFE, U+nFFFF of any plane)');
    else if (BLANK.test(value)) this.#violate(field, 'must not be only whitespace');
    else if (EDGE_WHITESPACE.test(value)) this.#violate(field, 'must not begin or end with whitespace');
    return value;
  }

  /** A uint64 that must be > 0 (tokens, incarnations); 0n when invalid. */
  positive(field: string, value: string): bigint {
    const parsed = this.#uint64(field, value);
    if (parsed === 0n) this.#violate(field, 'must be greater than 0');
    return parsed ?? 0n;
  }

  /** A TTL in ms within [minTtlMs, maxTtlMs]; with `zeroKeeps`, 0 is allowed too (Renew). 0 when invalid. */
  ttlMs(field: string, value: string, options: { zeroKeeps?: boolean } = {}): number {
    const parsed = this.#uint64(field, value);
    if (parsed === undefined || (parsed === 0n && options.zeroKeeps)) return 0;
    if (parsed < BigInt(this.limits.minTtlMs) || parsed > BigInt(this.limits.maxTtlMs)) {
      this.#violate(
        field,
        `must be between ${this.limits.minTtlMs} and ${this.limits.maxTtlMs} ms${options.zeroKeeps ? ', or 0 to keep the current TTL' : ''}`,
      );
      return 0;
    }
    return Number(parsed);
  }

  /** An integer count within [min, max] (e.g. a page size); `min` when invalid. */
  count(field: string, value: number, min: number, max: number): number {
    if (Number.isInteger(value) && value >= min && value <= max) return value;
    this.#violate(field, `must be between ${min} and ${max}, got ${value}`);
    return min;
  }

  /** A message field that must be set (proto3 leaves an unset one null); undefined when it is not. */
  present<T>(field: string, value: T | null | undefined): T | undefined {
    if (value === null || value === undefined) this.#violate(field, 'must be set');
    return value ?? undefined;
  }

  /** Opaque bytes of at most maxPayloadBytes. */
  payload(field: string, value: Buffer): Buffer {
    if (value.length > this.limits.maxPayloadBytes) {
      this.#violate(field, `must be at most ${this.limits.maxPayloadBytes} bytes, got ${value.length}`);
    }
    return value;
  }

  /** Throws INVALID_FIELD (INVALID_ARGUMENT) if any field was bad. */
  done(): void {
    if (this.#violations.length === 0) return;
    const fields = this.#violations.map((v) => v.field);
    const first = this.#violations[0]!;
    throw new Failure(
      'INVALID_FIELD',
      `invalid ${first.field}: ${first.description}${fields.length > 1 ? ` (and ${fields.slice(1).join(', ')})` : ''}`,
      { field: fields.join(',') },
      this.#violations,
    );
  }

  /** The value, or undefined once the field has its one violation. */
  #uint64(field: string, value: string): bigint | undefined {
    // grpc-js hands uint64 over as decimal strings (longs: String); anything
    // else means a client bypassed the codec, which is still bad input.
    if (!/^\d{1,20}$/.test(value) || BigInt(value) > UINT64_MAX) {
      this.#violate(field, 'must be an unsigned 64-bit integer');
      return undefined;
    }
    return BigInt(value);
  }

  #violate(field: string, description: string): void {
    this.#violations.push({ field, description });
  }
}
