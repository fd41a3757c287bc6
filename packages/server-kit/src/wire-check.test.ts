// V3 on the walker alone, table-driven over the real descriptors: what it
// refuses (with the field and the fault), and what valid encodings it lets
// through, including nested messages and unknown fields of every wire type.
import { describe, expect, it } from 'vitest';
import { descriptors } from '@fencer/proto';
import { Failure } from './failure.js';
import { checkEncoding, decodeStrictly } from './wire-check.js';

const WRITE = descriptors.getMessage('fencing.v1.WriteRequest')!;
// AcquireResponse { Lease lease = 1 { string resource = 1; ... uint64 token = 4 }; bool replayed = 2 }
const ACQUIRED = descriptors.getMessage('fencing.v1.AcquireResponse')!;

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('checkEncoding', () => {
  it.each([
    ['an empty message', WRITE, bytes()],
    ['every field of a Write', WRITE, bytes(0x0a, 1, 0x72, 0x10, 0x01, 0x1a, 1, 0x78, 0x22, 2, 0xff, 0x00)],
    ['a nested message', ACQUIRED, bytes(0x0a, 5, 0x0a, 1, 0x72, 0x20, 0x07, 0x10, 0x01)],
    [
      'unknown fields: varint, 64-bit, bytes, 32-bit, group',
      WRITE,
      bytes(
        0xa0,
        0x06,
        0x01,
        0xa9,
        0x06,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        0xa2,
        0x06,
        0,
        0xad,
        0x06,
        1,
        2,
        3,
        4,
        0xab,
        0x06,
        0x08,
        0x01,
        0xac,
        0x06,
      ),
    ],
  ])('accepts %s', (_what, schema, encoded) => {
    expect(() => checkEncoding(schema, encoded)).not.toThrow();
  });

  it.each([
    ['a length past the end', WRITE, bytes(0x1a, 50, 0x61), 'result_id', 'truncated'],
    ['a varint cut short', WRITE, bytes(0x10, 0x80), 'token', 'truncated'],
    [
      'a string sent as a varint',
      WRITE,
      bytes(0x08, 0x03),
      'resource',
      'wire type 0, but its type is sent as wire type 2',
    ],
    [
      'a uint64 sent as bytes',
      WRITE,
      bytes(0x12, 1, 0x01),
      'token',
      'wire type 2, but its type is sent as wire type 0',
    ],
    ['field number 0', WRITE, bytes(0x02, 1, 0x72), undefined, 'field number 0 (tag at byte 0)'],
    ['invalid UTF-8', WRITE, bytes(0x0a, 2, 0xc3, 0x28), 'resource', 'invalid UTF-8'],
    ['a UTF-16 surrogate encoded as UTF-8', WRITE, bytes(0x0a, 3, 0xed, 0xa0, 0x80), 'resource', 'invalid UTF-8'],
    [
      'a nested field past its message',
      ACQUIRED,
      bytes(0x0a, 2, 0x0a, 3, 0x72, 0x72, 0x72),
      'lease.resource',
      'truncated: runs past the end of its message',
    ],
    [
      'a nested wrong wire type',
      ACQUIRED,
      bytes(0x0a, 2, 0x21, 0x00),
      'lease.token',
      'wire type 1, but its type is sent as wire type 0',
    ],
    [
      // Found by the hostile property test: proto-loader's decoder threw on it, an INTERNAL.
      'a tag in six bytes',
      WRITE,
      bytes(0xd2, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00),
      undefined,
      'tag longer than 5 bytes (tag at byte 0)',
    ],
    [
      'wire type 7 on an unknown field',
      WRITE,
      bytes(0xa7, 0x06),
      undefined,
      'unknown field 100: cant skip wire type 7',
    ],
  ])('refuses %s: MALFORMED_MESSAGE naming the field and the fault', (_what, schema, encoded, field, fault) => {
    let thrown: unknown;
    try {
      checkEncoding(schema, encoded);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Failure);
    const failure = thrown as Failure;
    expect([failure.reason, failure.metadata.field, failure.metadata.fault]).toEqual([
      'MALFORMED_MESSAGE',
      field,
      fault,
    ]);
    expect(failure.fieldViolations).toEqual(field === undefined ? [] : [{ field, description: fault }]);
  });
});

describe('decodeStrictly', () => {
  it('hands back what the decoder makes of bytes the walk accepts', () => {
    expect(decodeStrictly(WRITE, Buffer.from([0x0a, 1, 0x72]), (encoded) => encoded.length)).toBe(3);
  });

  it('turns a decoder that refuses what the walk accepted into MALFORMED_MESSAGE, not an internal error', () => {
    let thrown: unknown;
    try {
      decodeStrictly(WRITE, Buffer.from([0x0a, 1, 0x72]), () => {
        throw new RangeError('index out of range: 7 + 10 > 7');
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Failure);
    expect([(thrown as Failure).reason, (thrown as Failure).metadata.fault]).toEqual([
      'MALFORMED_MESSAGE',
      'undecodable: index out of range: 7 + 10 > 7',
    ]);
  });

  it('refuses before decoding what the walk refuses', () => {
    expect(() =>
      decodeStrictly(WRITE, Buffer.from([0x02, 1, 0x72]), () => {
        throw new Error('the decoder must not be reached');
      }),
    ).toThrow(/field number 0/);
  });
});
