import { describe, expect, it } from 'vitest';
import { Failure } from './failure.js';
import { RequestCheck } from './validation.js';

function violations(run: (check: RequestCheck) => void) {
  const check = new RequestCheck();
  run(check);
  try {
    check.done();
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(Failure);
    expect((error as Failure).reason).toBe('INVALID_FIELD');
    return (error as Failure).fieldViolations.map((v) => v.field);
  }
}

describe('RequestCheck (V1, V2)', () => {
  it.each([
    ['empty id', (c: RequestCheck) => c.id('resource', ''), ['resource']],
    ['513-byte id', (c: RequestCheck) => c.id('resource', 'x'.repeat(513)), ['resource']],
    ['512-byte id', (c: RequestCheck) => c.id('resource', 'é'.repeat(256)), []],
    ['513 bytes of 2-byte characters', (c: RequestCheck) => c.id('resource', 'é'.repeat(256) + 'x'), ['resource']],
    ['control character', (c: RequestCheck) => c.id('owner_id', 'a\nb'), ['owner_id']],
    ['DEL', (c: RequestCheck) => c.id('owner_id', 'a\u007fb'), ['owner_id']],
    ['C1 control (NEL)', (c: RequestCheck) => c.id('owner_id', 'a\u0085b'), ['owner_id']],
    ['U+FFFD (what invalid UTF-8 decodes to)', (c: RequestCheck) => c.id('result_id', 'a\uFFFDb'), ['result_id']],
    ['non-ASCII letters and emoji', (c: RequestCheck) => c.id('result_id', 'Zürich-🦊'), []],
    // One answer per bad field: an unparsable number is not also "0" or "out of range".
    ['token not a number', (c: RequestCheck) => c.positive('token', 'x'), ['token']],
    ['token negative', (c: RequestCheck) => c.positive('token', '-1'), ['token']],
    ['token past uint64', (c: RequestCheck) => c.positive('token', '18446744073709551616'), ['token']],
    ['ttl not a number', (c: RequestCheck) => c.ttlMs('ttl_ms', '1e3'), ['ttl_ms']],
    ['ttl not a number in Renew', (c: RequestCheck) => c.ttlMs('ttl_ms', '', { zeroKeeps: true }), ['ttl_ms']],
    ['ttl at the bounds', (c: RequestCheck) => (c.ttlMs('ttl_ms', '100'), c.ttlMs('ttl_ms', '86400000')), []],
    ['token 0', (c: RequestCheck) => c.positive('token', '0'), ['token']],
    ['token max uint64', (c: RequestCheck) => c.positive('token', '18446744073709551615'), []],
    ['ttl below min', (c: RequestCheck) => c.ttlMs('ttl_ms', '99'), ['ttl_ms']],
    ['ttl zero in Acquire', (c: RequestCheck) => c.ttlMs('ttl_ms', '0'), ['ttl_ms']],
    ['ttl zero in Renew', (c: RequestCheck) => c.ttlMs('ttl_ms', '0', { zeroKeeps: true }), []],
    ['ttl above max', (c: RequestCheck) => c.ttlMs('ttl_ms', '86400001'), ['ttl_ms']],
    ['payload over 1 MiB', (c: RequestCheck) => c.payload('payload', Buffer.alloc(1024 * 1024 + 1)), ['payload']],
    ['payload of 1 MiB', (c: RequestCheck) => c.payload('payload', Buffer.alloc(1024 * 1024)), []],
    ['unset message field (WriteStream without its write)', (c: RequestCheck) => c.present('write', null), ['write']],
    ['set message field, even all defaults', (c: RequestCheck) => c.present('write', {}), []],
  ] as const)('%s', (_name, run, expected) => {
    expect(violations(run)).toEqual(expected);
  });

  // Invisible or reordering characters (general categories Cf, Zl, Zp) make
  // an id display as another and break the lines that echo it.
  const INVISIBLE = [
    ['U+202E right-to-left override (Cf)', '\u202E'],
    ['U+2066 left-to-right isolate (Cf)', '\u2066'],
    ['U+200B zero-width space (Cf)', '\u200B'],
    ['U+200D zero-width joiner (Cf)', '\u200D'],
    ['U+FEFF byte order mark (Cf)', '\uFEFF'],
    ['U+00AD soft hyphen (Cf)', '\u00AD'],
    ['U+E0001 language tag (Cf, astral)', '\u{E0001}'],
    ['U+2028 line separator (Zl)', '\u2028'],
    ['U+2029 paragraph separator (Zp)', '\u2029'],
  ] as const;
  const ID_FIELDS = ['resource', 'owner_id', 'result_id', 'request_id', 'grant_id'] as const;
  it.each(ID_FIELDS.flatMap((field) => INVISIBLE.map(([name, char]) => [field, name, char] as const)))(
    '%s with %s is refused naming the field',
    (field, _name, char) => {
      expect(violations((c) => c.id(field, `task${char}-7`))).toEqual([field]);
    },
  );

  // Noncharacters: reserved for a program's internal use, in every plane.
  const NONCHARACTERS = [
    ['U+FFFE', '\uFFFE'],
    ['U+FFFF', '\uFFFF'],
    ['U+FDD0, first of the block', '\uFDD0'],
    ['U+FDEF, last of the block', '\uFDEF'],
    ['U+1FFFE (plane 1)', '\u{1FFFE}'],
    ['U+EFFFF (plane 14)', '\u{EFFFF}'],
    ['U+10FFFF (plane 16, the last code point)', '\u{10FFFF}'],
  ] as const;
  it.each(ID_FIELDS.flatMap((field) => NONCHARACTERS.map(([name, char]) => [field, name, char] as const)))(
    '%s with the noncharacter %s is refused naming the field',
    (field, _name, char) => {
      expect(violations((c) => c.id(field, `task${char}-7`))).toEqual([field]);
    },
  );

  // Ids compare byte for byte: one that is blank, or that differs from
  // another only by whitespace at an end, reads the same and is another key.
  const WHITESPACE = [
    ['a single space', ' '],
    ['only no-break and ideographic spaces', '\u00A0\u3000'],
    ['a leading space', ' task-7'],
    ['a trailing space', 'task-7 '],
    ['a trailing no-break space', 'task-7\u00A0'],
    ['a leading ideographic space', '\u3000task-7'],
  ] as const;
  it.each(ID_FIELDS.flatMap((field) => WHITESPACE.map(([name, value]) => [field, name, value] as const)))(
    '%s with %s is refused naming the field',
    (field, _name, value) => {
      expect(violations((c) => c.id(field, value))).toEqual([field]);
    },
  );

  it.each([
    ['a plain space (Zs is allowed)', 'task 7'],
    ['a no-break space (Zs)', 'task\u00A07'],
    ['right-to-left letters without controls', 'משימה-7'],
    ['U+FDCF and U+FDF0, either side of the noncharacter block', 'task\uFDCF\uFDF0-7'],
    ['U+FFFC and U+1FFFD, just below the noncharacters of planes 0 and 1', 'task\uFFFC\u{1FFFD}-7'],
  ])('an id with %s is accepted', (_name, value) => {
    expect(violations((c) => c.id('resource', value))).toEqual([]);
  });

  it('names every bad field at once', () => {
    expect(
      violations((c) => {
        c.id('resource', '');
        c.positive('token', '0');
        c.id('result_id', 'ok');
      }),
    ).toEqual(['resource', 'token']);
  });
});
