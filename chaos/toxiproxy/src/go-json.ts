// JSON the way Toxiproxy's Go server reads and writes it, so clients see the
// same statuses and error texts (TOXIPROXY-API.md §1, §2): only the first
// JSON value of a body is read, field names match case-insensitively, type
// mismatches are reported with Go's wording, and output escapes <, > and &.

/** A parsed JSON value; numbers keep their literal text for Go's integer rules. */
export type JsonNode =
  | { readonly kind: 'null' }
  | { readonly kind: 'bool'; readonly value: boolean }
  | { readonly kind: 'number'; readonly literal: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'array'; readonly items: readonly JsonNode[] }
  | { readonly kind: 'object'; readonly entries: readonly (readonly [string, JsonNode])[] };

/** A body Go's decoder would refuse; `message` is Go's text (e.g. `EOF`, `unexpected EOF`). */
export class GoJsonError extends Error {
  override name = 'GoJsonError';
}

// Go's encoding/json gives up past this nesting depth; the bound also keeps
// this recursive parser far from the JS stack limit.
const MAX_DEPTH = 10_000;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** How Go quotes the offending byte in a syntax error: 'x', '\n', '\x01', '\''. */
function quoteByte(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  const named: Record<number, string> = {
    0x07: '\\a',
    0x08: '\\b',
    0x0c: '\\f',
    0x0a: '\\n',
    0x0d: '\\r',
    0x09: '\\t',
    0x0b: '\\v',
    0x5c: '\\\\',
  };
  const text = named[c] ?? (c < 0x20 || c === 0x7f ? `\\x${c.toString(16).padStart(2, '0')}` : String.fromCharCode(c));
  return `'${text}'`;
}

type Container =
  | { readonly kind: 'array'; readonly items: JsonNode[] }
  | { readonly kind: 'object'; readonly entries: [string, JsonNode][]; key: string };

class Parser {
  private pos = 0;

  constructor(private readonly bytes: Uint8Array) {}

  first(): JsonNode {
    this.skipSpace();
    // Only whitespace is io.EOF; a value cut short is io.ErrUnexpectedEOF.
    if (this.pos >= this.bytes.length) throw new GoJsonError('EOF');
    // An explicit stack, not recursion: a deeply nested body must end in
    // Go's "exceeded max depth", not in a JS stack overflow.
    const open: Container[] = [];
    for (;;) {
      let value = this.valueStart(open);
      if (value === undefined) continue;
      for (;;) {
        const top = open.at(-1);
        if (!top) return value;
        this.skipSpace();
        if (top.kind === 'array') {
          top.items.push(value);
          if (this.peek() === 0x2c) {
            this.pos++;
            this.skipSpace();
            break;
          }
          if (this.peek() !== 0x5d) this.fail('after array element');
          this.pos++;
          open.pop();
          value = { kind: 'array', items: top.items };
          continue;
        }
        top.entries.push([top.key, value]);
        if (this.peek() === 0x2c) {
          this.pos++;
          this.skipSpace();
          top.key = this.key();
          break;
        }
        if (this.peek() !== 0x7d) this.fail('after object key:value pair');
        this.pos++;
        open.pop();
        value = { kind: 'object', entries: top.entries };
      }
    }
  }

  private fail(context: string): never {
    if (this.pos >= this.bytes.length) throw new GoJsonError('unexpected EOF');
    throw new GoJsonError(`invalid character ${quoteByte(this.bytes[this.pos]!)} ${context}`);
  }

  private skipSpace(): void {
    while (this.pos < this.bytes.length && isSpace(this.bytes[this.pos]!)) this.pos++;
  }

  private peek(): number | undefined {
    return this.bytes[this.pos];
  }

  /** An object key and its colon, leaving the position at the value. */
  private key(): string {
    if (this.peek() !== 0x22) this.fail('looking for beginning of object key string');
    const key = this.string();
    this.skipSpace();
    if (this.peek() !== 0x3a) this.fail('after object key');
    this.pos++;
    this.skipSpace();
    return key;
  }

  /** A complete scalar or empty container, or undefined after opening a container on `open`. */
  private valueStart(open: Container[]): JsonNode | undefined {
    const c = this.peek();
    switch (c) {
      case 0x7b:
      case 0x5b: {
        if (open.length >= MAX_DEPTH) throw new GoJsonError('exceeded max depth');
        this.pos++;
        this.skipSpace();
        if (c === 0x7b) {
          if (this.peek() === 0x7d) {
            this.pos++;
            return { kind: 'object', entries: [] };
          }
          open.push({ kind: 'object', entries: [], key: this.key() });
          return undefined;
        }
        if (this.peek() === 0x5d) {
          this.pos++;
          return { kind: 'array', items: [] };
        }
        open.push({ kind: 'array', items: [] });
        return undefined;
      }
      case 0x22:
        return { kind: 'string', value: this.string() };
      case 0x74:
        this.literal('true');
        return { kind: 'bool', value: true };
      case 0x66:
        this.literal('false');
        return { kind: 'bool', value: false };
      case 0x6e:
        this.literal('null');
        return { kind: 'null' };
      default:
        if (c === 0x2d || (c !== undefined && isDigit(c))) return { kind: 'number', literal: this.number() };
        return this.fail('looking for beginning of value');
    }
  }

  private literal(word: string): void {
    this.pos++;
    for (let i = 1; i < word.length; i++) {
      if (this.peek() !== word.charCodeAt(i)) this.fail(`in literal ${word} (expecting '${word[i]}')`);
      this.pos++;
    }
  }

  private number(): string {
    const start = this.pos;
    if (this.peek() === 0x2d) {
      this.pos++;
      if (!isDigit(this.peek() ?? -1)) this.fail('in numeric literal');
    }
    if (this.peek() === 0x30) this.pos++;
    else while (isDigit(this.peek() ?? -1)) this.pos++;
    if (this.peek() === 0x2e) {
      this.pos++;
      if (!isDigit(this.peek() ?? -1)) this.fail('after decimal point in numeric literal');
      while (isDigit(this.peek() ?? -1)) this.pos++;
    }
    if (this.peek() === 0x65 || this.peek() === 0x45) {
      this.pos++;
      if (this.peek() === 0x2b || this.peek() === 0x2d) this.pos++;
      if (!isDigit(this.peek() ?? -1)) this.fail('in exponent of numeric literal');
      while (isDigit(this.peek() ?? -1)) this.pos++;
    }
    return new TextDecoder().decode(this.bytes.subarray(start, this.pos));
  }

  private string(): string {
    const start = this.pos;
    this.pos++;
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail('in string literal');
      if (c === 0x22) break;
      if (c < 0x20) this.fail('in string literal');
      if (c === 0x5c) {
        this.pos++;
        const e = this.peek();
        if (e === 0x75) {
          this.pos++;
          for (let i = 0; i < 4; i++, this.pos++) {
            if (!isHex(this.peek() ?? -1)) this.fail('in \\u hexadecimal character escape');
          }
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(String.fromCharCode(e))) this.fail('in string escape code');
      }
      this.pos++;
    }
    this.pos++;
    // The literal is valid JSON now; TextDecoder turns invalid UTF-8 into U+FFFD as Go does.
    return JSON.parse(new TextDecoder().decode(this.bytes.subarray(start, this.pos))) as string;
  }
}

/**
 * Parses the first JSON value of `body` and ignores whatever follows it, as
 * Go's json.Decoder does (TOXIPROXY-API.md §1). Throws GoJsonError.
 */
export function parseFirstValue(body: Uint8Array): JsonNode {
  return new Parser(body).first();
}

/** The Go type a field is decoded into; decides which JSON values it takes. */
export type GoKind = 'string' | 'bool' | 'int' | 'int64' | 'float32';

/** A decoded field value: strings and bools as they are, every number kind as a JS number. */
export type GoValue = string | boolean | number;

const FLOAT32_MAX = 3.4028234663852886e38;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Where a value sits, for Go's UnmarshalTypeError: the innermost struct's name and the full field path. */
export interface GoLocation {
  /** The Go struct's short name, e.g. `TimeoutToxic`; empty for a top-level value. */
  readonly struct: string;
  /** The dotted JSON path from the root, e.g. `attributes.timeout`. */
  readonly path: string;
}

/** Go's `json: cannot unmarshal <what> into Go struct field S.path of type T` (or `Go value of type T`). */
export function unmarshalTypeError(what: string, at: GoLocation, goType: string): GoJsonError {
  const target = at.struct === '' ? 'Go value' : `Go struct field ${at.struct}.${at.path}`;
  return new GoJsonError(`json: cannot unmarshal ${what} into ${target} of type ${goType}`);
}

/** The word Go uses for a JSON value in a type error. */
export function jsonKindName(node: JsonNode): string {
  switch (node.kind) {
    case 'null':
      return 'null';
    case 'bool':
      return 'bool';
    case 'number':
      return 'number';
    case 'string':
      return 'string';
    case 'array':
      return 'array';
    case 'object':
      return 'object';
  }
}

/**
 * Decodes a scalar into a Go field of `kind`. Returns undefined for null (Go
 * leaves the field as it was); throws GoJsonError for a value of the wrong type.
 */
export function decodeScalar(node: JsonNode, kind: GoKind, at: GoLocation): GoValue | undefined {
  if (node.kind === 'null') return undefined;
  switch (kind) {
    case 'string':
      if (node.kind === 'string') return node.value;
      break;
    case 'bool':
      if (node.kind === 'bool') return node.value;
      break;
    case 'int':
    case 'int64':
      if (node.kind === 'number') {
        const literal = node.literal;
        if (!/^-?\d+$/.test(literal) || BigInt(literal) < INT64_MIN || BigInt(literal) > INT64_MAX) {
          throw unmarshalTypeError(`number ${literal}`, at, kind);
        }
        return Number(literal);
      }
      break;
    case 'float32':
      if (node.kind === 'number') {
        const value = Number(node.literal);
        if (!Number.isFinite(value) || Math.abs(value) > FLOAT32_MAX) {
          throw unmarshalTypeError(`number ${node.literal}`, at, kind);
        }
        return Math.fround(value);
      }
      break;
  }
  throw unmarshalTypeError(jsonKindName(node), at, kind);
}

/** A Go struct as JSON sees it: its type name and its fields. */
export interface GoStruct {
  /** Short name used in field errors, e.g. `Proxy`. */
  readonly name: string;
  /** Qualified name used for a value of the wrong kind, e.g. `toxiproxy.Proxy`. */
  readonly qualified: string;
  readonly fields: Readonly<Record<string, GoKind>>;
}

/**
 * Decodes an object into `struct`'s scalar fields. Keys match case-insensitively
 * and a later duplicate wins; unknown keys are ignored; null leaves a field
 * unset. The first type mismatch in document order is thrown, after the whole
 * object was checked, as Go does. `nested` handles non-scalar fields (their
 * own decoder is called with the node). Throws GoJsonError.
 */
export function decodeStruct(
  node: JsonNode,
  struct: GoStruct,
  at: GoLocation,
  nested: Readonly<Record<string, (node: JsonNode) => void>> = {},
): Map<string, GoValue> {
  const values = new Map<string, GoValue>();
  if (node.kind === 'null') return values;
  if (node.kind !== 'object') throw unmarshalTypeError(jsonKindName(node), at, struct.qualified);
  const names = [...Object.keys(struct.fields), ...Object.keys(nested)];
  let firstError: GoJsonError | undefined;
  for (const [key, value] of node.entries) {
    const field = names.find((name) => name === key) ?? names.find((name) => name.toLowerCase() === key.toLowerCase());
    if (field === undefined) continue;
    const path = at.path === '' ? field : `${at.path}.${field}`;
    try {
      const visit = nested[field];
      if (visit) {
        visit(value);
        continue;
      }
      const decoded = decodeScalar(value, struct.fields[field]!, { struct: struct.name, path });
      if (decoded !== undefined) values.set(field, decoded);
    } catch (error) {
      if (!(error instanceof GoJsonError)) throw error;
      firstError ??= error;
    }
  }
  if (firstError) throw firstError;
  return values;
}

/**
 * JSON text as Go's encoder writes it: compact, with <, >, &, U+2028 and
 * U+2029 escaped. Object keys keep their insertion order.
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The shortest decimal that reads back as the same float32, as Go prints a float32. */
export function float32Number(value: number): number {
  const single = Math.fround(value);
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(single.toPrecision(digits));
    if (Math.fround(candidate) === single) return candidate;
  }
  return single;
}
