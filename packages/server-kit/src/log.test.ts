// V5: no bearer credential reaches a log line, grpc-js's own warnings
// included; warnings a client can repeat per request are rate-limited.
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RepeatLimiter, redactSecrets, routeGrpcLogs } from './log.js';

const SECRET = 'c3VwZXItc2VjcmV0LXRva2Vu_0123';

describe('redactSecrets (V5)', () => {
  it.each([
    ['a plain header value', `Bearer ${SECRET}`, 'Bearer [REDACTED]'],
    ['any case of the scheme', `authorization: bEaReR ${SECRET}.`, 'authorization: bEaReR [REDACTED]'],
    ['a tab after the scheme', `Bearer\t${SECRET}`, 'Bearer [REDACTED]'],
    ['a JSON-escaped tab after the scheme', `{"msg":"Bearer\\t${SECRET}"}`, '{"msg":"Bearer [REDACTED]"}'],
    ['a JSON-escaped control inside the credential', `"Bearer ${SECRET}\\u000b${SECRET}"`, '"Bearer [REDACTED]"'],
    [
      'a credential in quotes, JSON-escaped',
      `"value \\"Bearer ${SECRET}\\" is bad"`,
      '"value \\"Bearer [REDACTED]\\" is bad"',
    ],
    ['two credentials', `Bearer ${SECRET} and bearer ${SECRET}`, 'Bearer [REDACTED] and bearer [REDACTED]'],
    ['no credential', 'token 42 is below the fence 43', 'token 42 is below the fence 43'],
    ['already redacted text (idempotent)', 'Bearer [REDACTED]', 'Bearer [REDACTED]'],
  ])('%s', (_name, text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });
});

describe('RepeatLimiter (V4, V5)', () => {
  function limiter(maxKeysPerWindow = 3) {
    const clock = { now: 0 };
    return { clock, limiter: new RepeatLimiter({ windowMs: 1_000, maxKeysPerWindow, now: () => clock.now }) };
  }

  it('admits each key once per window, then again in the next, reporting what it held back', () => {
    const { clock, limiter: l } = limiter();
    expect(l.admit('a')).toEqual({ log: true, heldBack: 0 });
    for (let i = 0; i < 100; i++) expect(l.admit('a')).toEqual({ log: false });
    expect(l.admit('b')).toEqual({ log: true, heldBack: 0 });
    clock.now = 999;
    expect(l.admit('a')).toEqual({ log: false });
    clock.now = 1_000;
    expect(l.admit('a')).toEqual({ log: true, heldBack: 101 });
    expect(l.admit('b')).toEqual({ log: true, heldBack: 0 });
  });

  it('admits at most maxKeysPerWindow distinct keys per window, so varying the warning does not help', () => {
    const { clock, limiter: l } = limiter(3);
    const admitted = Array.from({ length: 50 }, (_, i) => l.admit(`key-${i}`).log);
    expect(admitted.filter(Boolean)).toHaveLength(3);
    clock.now = 1_000;
    expect(l.admit('key-49')).toEqual({ log: true, heldBack: 47 });
  });
});

describe('routeGrpcLogs (V5)', () => {
  afterEach(() => grpc.setLogger(console));

  it("withholds a refused header's value, redacts, and logs a warning repeated per request once", () => {
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
    routeGrpcLogs(log, new RepeatLimiter({ windowMs: 60_000, maxKeysPerWindow: 20, now: () => 0 }));
    // What grpc-js does with the headers of every incoming request.
    for (let i = 0; i < 100; i++) grpc.Metadata.fromHttp2Headers({ authorization: `Bearer\t${SECRET}` });
    grpc.Metadata.fromHttp2Headers({ 'x-api-key': `${SECRET}\t` });
    expect(lines.join('')).not.toContain(SECRET.slice(0, 12));
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toMatchObject([
      { source: 'grpc-js', level: 40, msg: expect.stringContaining('"authorization"') },
      { source: 'grpc-js', level: 40, msg: expect.stringContaining('"x-api-key"') },
    ]);
  });
});
