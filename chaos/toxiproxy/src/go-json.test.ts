import { describe, expect, it } from 'vitest';
import { decodeStruct, float32Number, goJson, parseFirstValue, type GoStruct } from './go-json.js';

const parse = (text: string) => parseFirstValue(Buffer.from(text));

describe('parseFirstValue', () => {
  it.each([
    ['', 'EOF'],
    ['  \n', 'EOF'],
    ['{', 'unexpected EOF'],
    ['[1,2', 'unexpected EOF'],
    ['x', "invalid character 'x' looking for beginning of value"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
    ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`],
    ['[1 2]', "invalid character '2' after array element"],
    ['[1,]', "invalid character ']' looking for beginning of value"],
    ['nul!', "invalid character '!' in literal null (expecting 'l')"],
    ['-x', "invalid character 'x' in numeric literal"],
    ['"a\nb"', "invalid character '\\n' in string literal"],
    ["'a'", "invalid character '\\'' looking for beginning of value"],
    ['"\\q"', "invalid character 'q' in string escape code"],
    ['['.repeat(10_001), 'exceeded max depth'],
  ])('refuses %j with Go\'s "%s"', (text, message) => {
    expect(() => parse(text)).toThrow(message);
  });

  it('reads only the first value, as Go does', () => {
    expect(parse('{"a":1} {"b"')).toEqual({ kind: 'object', entries: [['a', { kind: 'number', literal: '1' }]] });
    expect(parse('12abc')).toEqual({ kind: 'number', literal: '12' });
  });
});

describe('decodeStruct', () => {
  const struct: GoStruct = { name: 'T', qualified: 'pkg.T', fields: { name: 'string', n: 'int64', f: 'float32' } };
  const at = { struct: '', path: '' };

  it('matches keys case-insensitively, lets a later duplicate win, ignores unknown keys and null', () => {
    const values = decodeStruct(parse('{"NAME":"a","name":"b","n":null,"other":[1],"f":0.5}'), struct, at);
    expect(Object.fromEntries(values)).toEqual({ name: 'b', f: 0.5 });
  });

  it.each([
    ['{"name":5}', 'json: cannot unmarshal number into Go struct field T.name of type string'],
    ['{"n":"5"}', 'json: cannot unmarshal string into Go struct field T.n of type int64'],
    ['{"n":1.5}', 'json: cannot unmarshal number 1.5 into Go struct field T.n of type int64'],
    [
      '{"n":9223372036854775808}',
      'json: cannot unmarshal number 9223372036854775808 into Go struct field T.n of type int64',
    ],
    ['{"f":1e39}', 'json: cannot unmarshal number 1e39 into Go struct field T.f of type float32'],
    ['[]', 'json: cannot unmarshal array into Go value of type pkg.T'],
    ['{"n":"x","name":1}', 'json: cannot unmarshal string into Go struct field T.n of type int64'],
  ])('refuses %s with "%s"', (text, message) => {
    expect(() => decodeStruct(parse(text), struct, at)).toThrow(message);
  });
});

describe('output', () => {
  it('escapes <, > and & as Go does', () => {
    expect(goJson({ error: '<a&b>' })).toBe('{"error":"\\u003ca\\u0026b\\u003e"}');
  });

  it('prints float32 toxicity with the shortest digits', () => {
    expect(float32Number(Math.fround(0.1))).toBe(0.1);
    expect(float32Number(1)).toBe(1);
  });
});
