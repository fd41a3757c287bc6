import { format } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { pino, type Logger } from 'pino';
import { ConfigError } from '@fencer/cli-kit';

/** pino's logger: JSON lines, `log.info({ field }, 'message')`. */
export type { Logger };

const LEVELS = [...Object.keys(pino.levels.values), 'silent'];

// V5: a bearer credential as it appears in a JSON log line: after the scheme
// come blanks or escaped controls (a tab is `\t` there), then the credential
// up to the next blank or quote, escapes included.
const BEARER_CREDENTIAL = /\b(bearer)(?:\s|\\[bfnrt]|\\u[0-9a-fA-F]{4})+(?:[^\s"\\]|\\[^"])+/gi;

/**
 * V5: `text` with every bearer credential replaced by `[REDACTED]`. Works on
 * plain text and on JSON lines alike; the scheme word stays, so a reader
 * still sees that a credential was there.
 */
export function redactSecrets(text: string): string {
  return text.replace(BEARER_CREDENTIAL, '$1 [REDACTED]');
}

/**
 * JSON logs on stderr (stdout carries only the ready line), every line
 * passed through redactSecrets on its way out, so no message, field or error
 * stack writes a bearer credential (V5). Level from FENCER_LOG_LEVEL,
 * default info; an unknown level is a ConfigError.
 */
export function createLogger(service: string, level = process.env.FENCER_LOG_LEVEL ?? 'info'): Logger {
  if (!LEVELS.includes(level))
    throw new ConfigError(`FENCER_LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${level}"`);
  const stderr = pino.destination({ fd: 2, sync: true });
  return pino(
    { name: service, level, base: { service, pid: process.pid } },
    { write: (line: string) => stderr.write(redactSecrets(line)) },
  );
}

/** A logger that drops everything; for in-process tests. */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * Decides which of a stream of repeated warnings reach the log (V4, V5): each
 * distinct key once per window, and at most `maxKeysPerWindow` distinct keys
 * per window, so neither one client repeating itself nor one varying its
 * warnings costs a log line per request. The first line admitted in a window
 * reports how many were held back in the window before. Memory is bounded by
 * `maxKeysPerWindow`.
 */
export class RepeatLimiter {
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  #windowStart = -Infinity;
  #seen = new Set<string>();
  #heldBack = 0;

  constructor(options: { windowMs: number; maxKeysPerWindow: number; now?: () => number }) {
    this.#windowMs = options.windowMs;
    this.#maxKeys = options.maxKeysPerWindow;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Whether to log `key` now; when admitted, `heldBack` counts the lines held back in the window before. */
  admit(key: string): { log: false } | { log: true; heldBack: number } {
    const now = this.#now();
    let heldBack = 0;
    if (now - this.#windowStart >= this.#windowMs) {
      heldBack = this.#heldBack;
      this.#windowStart = now;
      this.#seen = new Set();
      this.#heldBack = 0;
    }
    if (this.#seen.has(key) || this.#seen.size >= this.#maxKeys) {
      this.#heldBack++;
      return { log: false };
    }
    this.#seen.add(key);
    return { log: true, heldBack };
  }
}

// grpc-js logs this, with the whole header value, for every request that
// carries a header value HTTP/2 allows but gRPC does not (a tab, say): an
// `authorization` header then hands it the bearer credential.
const REFUSED_METADATA = /^Failed to add metadata entry ([^:]{0,64})/;

/**
 * grpc-js's message with any refused header's value withheld (V5): the
 * value may be a credential, and what is wrong with it does not need it.
 */
function withoutHeaderValues(message: string): string {
  const refused = REFUSED_METADATA.exec(message);
  return refused
    ? `grpc-js dropped metadata entry "${refused[1]}": its value has characters gRPC does not allow (value withheld)`
    : message;
}

/**
 * Routes grpc-js's own diagnostics (bind failures, channel errors, refused
 * headers) into `log`, so a server's stderr holds only JSON lines plus, on a
 * failed start, the one plain-text reason line. Header values are withheld
 * and credentials redacted (V5); warnings a client can repeat per request
 * are logged once per window (RepeatLimiter, one minute, 20 distinct
 * warnings) rather than once per request. Debug tracing (GRPC_TRACE) is
 * redacted but not limited: it is opt-in and per request by nature.
 * Process-wide: call once, from a composition root.
 */
export function routeGrpcLogs(
  log: Logger,
  limiter = new RepeatLimiter({ windowMs: 60_000, maxKeysPerWindow: 20 }),
): void {
  const limited =
    (level: 'warn' | 'info') =>
    (...args: unknown[]) => {
      const message = redactSecrets(withoutHeaderValues(format(...args)));
      const verdict = limiter.admit(message);
      if (!verdict.log) return;
      log[level]({ source: 'grpc-js', ...(verdict.heldBack > 0 ? { heldBack: verdict.heldBack } : {}) }, message);
    };
  grpc.setLogger({
    error: limited('warn'),
    info: limited('info'),
    debug: (...args: unknown[]) => log.debug({ source: 'grpc-js' }, redactSecrets(format(...args))),
  });
}
