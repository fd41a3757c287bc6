// V3: a request is decoded strictly, never as a lenient partial decode.
// proto-loader's decoder (protobufjs) applied a Write whose last field
// declared 50 bytes and sent 4, read a string sent as a varint as a length,
// and took field number 0. @bufbuild/protobuf's fromBinary refuses
// truncation, field 0 and invalid UTF-8, but still reads a field sent with
// the wrong wire type by its declared type. So the bytes are walked here
// against the message's descriptor, with that library's reader, before the
// usual decode.
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { Failure } from './failure.js';

// Deeper nesting than any real request, and a bound on the walk's recursion.
const MAX_DEPTH = 32;

/**
 * Throws Failure MALFORMED_MESSAGE unless `bytes` are a valid encoding of
 * `schema`: every tag has a field number above 0 and a known wire type,
 * every known field has the wire type its type calls for, nothing is
 * truncated, every string is UTF-8. The details name the field (dotted path,
 * as a BadRequest field violation) when it is known, and the fault. Unknown
 * fields with a valid encoding pass, for forward compatibility.
 */
export function checkEncoding(schema: DescMessage, bytes: Uint8Array): void {
  walk(schema, new BinaryReader(bytes), bytes.length, '', 0);
}

/**
 * checkEncoding, then `decode` (proto-loader's): the request object, or
 * Failure MALFORMED_MESSAGE. Two decoders may still disagree on bytes the
 * walk let through (an overlong varint inside a length, say), and whatever
 * the second refuses is the request's fault, never an INTERNAL error.
 */
export function decodeStrictly<T>(schema: DescMessage, bytes: Buffer, decode: (bytes: Buffer) => T): T {
  checkEncoding(schema, bytes);
  try {
    return decode(bytes);
  } catch (error) {
    throw malformed(undefined, `undecodable: ${(error as Error).message}`);
  }
}

function walk(schema: DescMessage, reader: BinaryReader, end: number, prefix: string, depth: number): void {
  if (depth > MAX_DEPTH) throw malformed(prefix.slice(0, -1), `nested more than ${MAX_DEPTH} messages deep`);
  while (reader.pos < end) {
    const at = reader.pos;
    const tag = read(undefined, () => reader.uint32());
    // A tag is a 32-bit varint: five bytes at most. The reader takes more
    // (and drops the high bits); proto-loader's decoder does not.
    if (reader.pos - at > 5) throw malformed(undefined, `tag longer than 5 bytes (tag at byte ${at})`);
    const number = tag >>> 3;
    const wireType = (tag & 7) as WireType; // 6 and 7 name no wire type: skip() refuses them
    if (number === 0) throw malformed(undefined, `field number 0 (tag at byte ${at})`);
    const field = schema.fields.find((f) => f.number === number);
    const name = field ? prefix + field.name : undefined;
    if (!field) {
      read(undefined, () => reader.skip(wireType, number), `unknown field ${number}: `);
    } else {
      const expected = wireTypes(field);
      if (!expected.includes(wireType))
        throw malformed(name, `wire type ${wireType}, but its type is sent as wire type ${expected.join(' or ')}`);
      readField(field, wireType, reader, name!, depth);
    }
    if (reader.pos > end) throw malformed(name, 'truncated: runs past the end of its message');
  }
}

function readField(field: DescField, wireType: WireType, reader: BinaryReader, name: string, depth: number): void {
  const message = field.fieldKind === 'message' || (field.fieldKind === 'list' && field.listKind === 'message');
  if (message && wireType === WireType.LengthDelimited) {
    const length = read(name, () => reader.uint32());
    const end = reader.pos + length;
    if (end > reader.len)
      throw malformed(name, `truncated: declares ${length} bytes, ${reader.len - reader.pos} remain`);
    walk(field.message, reader, end, `${name}.`, depth + 1);
  } else if (field.scalar === ScalarType.STRING && field.fieldKind !== 'map') {
    read(name, () => reader.string(true));
  } else if (field.fieldKind === 'list' && wireType === WireType.LengthDelimited && !message) {
    // Packed numbers: each element must be whole.
    const packed = new BinaryReader(read(name, () => reader.bytes()));
    const element = scalarWireType(field.scalar ?? ScalarType.INT32);
    while (packed.pos < packed.len) read(name, () => packed.skip(element, field.number));
  } else {
    // Numbers, bytes, groups, map entries (whose keys and values are not walked).
    read(name, () => reader.skip(wireType, field.number));
  }
}

/** Runs one read of BinaryReader, turning its errors into MALFORMED_MESSAGE. */
function read<T>(field: string | undefined, op: () => T, context = ''): T {
  try {
    return op();
  } catch (error) {
    if (error instanceof Failure) throw error;
    // BinaryReader: RangeError past the end; TypeError from the fatal UTF-8
    // decoder; Error for an overlong varint or an unusable wire type.
    const fault =
      error instanceof RangeError
        ? 'truncated'
        : error instanceof TypeError
          ? 'invalid UTF-8'
          : (error as Error).message;
    throw malformed(field, context + fault);
  }
}

/** The wire types a field may arrive in. */
function wireTypes(field: DescField): WireType[] {
  switch (field.fieldKind) {
    case 'scalar':
      return [scalarWireType(field.scalar)];
    case 'enum':
      return [WireType.Varint];
    case 'message':
      return [field.delimitedEncoding ? WireType.StartGroup : WireType.LengthDelimited];
    case 'map':
      return [WireType.LengthDelimited];
    case 'list':
      if (field.listKind === 'message')
        return [field.delimitedEncoding ? WireType.StartGroup : WireType.LengthDelimited];
      if (field.listKind === 'enum') return [WireType.Varint, WireType.LengthDelimited];
      // Repeated numbers may come packed (length-delimited) or one by one.
      return [...new Set([scalarWireType(field.scalar), WireType.LengthDelimited])];
  }
}

function scalarWireType(scalar: ScalarType): WireType {
  switch (scalar) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return WireType.LengthDelimited;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return WireType.Bit64;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return WireType.Bit32;
    default:
      return WireType.Varint;
  }
}

function malformed(field: string | undefined, fault: string): Failure {
  return field === undefined
    ? new Failure('MALFORMED_MESSAGE', `malformed request: ${fault}`, { fault })
    : new Failure('MALFORMED_MESSAGE', `malformed request: field ${field}: ${fault}`, { field, fault }, [
        { field, description: fault },
      ]);
}
