// The HTTP API (TOXIPROXY-API.md §1, §2, §4): gorilla/mux-style routing with
// its 404 and 405 answers, the browser block, request ids, and the response
// conventions of the real server, over plain node:http.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@fencer/server-kit';
import { ApiError } from './errors.js';
import { goJson } from './go-json.js';
import { decodePopulateBody, decodeProxyBody, requireNew } from './proxy-spec.js';
import { PopulateError, type ProxyRegistry } from './registry.js';
import { toxicJson } from './toxic-spec.js';

/** The version this server imitates; clients and tests read it from GET /version. */
export const TOXIPROXY_VERSION = '2.12.0';

// A body beyond this is refused rather than buffered: nothing legitimate is
// anywhere near it, and the API must not be a way to exhaust memory.
const MAX_BODY_BYTES = 1024 * 1024;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What a handler answers: JSON with a status, or an empty 204. */
type Reply = { status: 200 | 201; body: unknown } | { status: 204 };

interface Request {
  readonly params: readonly string[];
  body(): Promise<Uint8Array>;
}

type Handler = (request: Request) => Promise<Reply> | Reply;

interface Route {
  readonly pattern: RegExp;
  readonly methods: Partial<Record<Method, Handler>>;
  /** §2: /populate answers errors as JSON carrying `proxies`. */
  readonly populateErrors?: boolean;
}

class BodyTooLarge extends Error {}

function readBody(request: IncomingMessage): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        request.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

// xid's alphabet: the real server's request ids are 20 base32hex characters (§1).
const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';
const processPart = randomBytes(9);
let requestCounter = randomBytes(3).readUIntBE(0, 3);

/** A 20-character id shaped like an xid (12 bytes in base32hex): unique per process and request, not time-ordered. */
function requestId(): string {
  const id = Buffer.alloc(12);
  processPart.copy(id, 0);
  requestCounter = (requestCounter + 1) & 0xffffff;
  id.writeUIntBE(requestCounter, 9, 3);
  let bits = 0;
  let value = 0;
  let text = '';
  for (const byte of id) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return text + BASE32HEX[(value << (5 - bits)) & 31];
}

/** The routes of §4 over `registry`; mutating handlers run one at a time. */
function routes(registry: ProxyRegistry): Route[] {
  const serial = <T>(operation: () => Promise<T> | T) => registry.serially(operation);
  const segment = '([^/]+)';
  return [
    {
      pattern: /^\/proxies$/,
      methods: {
        GET: () => ({ status: 200, body: Object.fromEntries(registry.list().map((p) => [p.name, p])) }),
        POST: async (r) => {
          const fields = requireNew(decodeProxyBody(await r.body()));
          return { status: 201, body: await serial(() => registry.create(fields)) };
        },
      },
    },
    {
      pattern: /^\/populate$/,
      populateErrors: true,
      methods: {
        POST: async (r) => {
          const entries = decodePopulateBody(await r.body());
          const proxies = await serial(() => registry.populate(entries));
          // TOXIPROXY-API.md §8: an empty populate answers `"proxies":null`, as Go encodes a nil slice.
          return { status: 201, body: { proxies: proxies.length === 0 ? null : proxies } };
        },
      },
    },
    {
      pattern: /^\/reset$/,
      methods: {
        POST: async () => {
          await serial(() => registry.reset());
          return { status: 204 };
        },
      },
    },
    {
      pattern: new RegExp(`^/proxies/${segment}$`),
      methods: {
        GET: (r) => ({ status: 200, body: registry.get(r.params[0]!) }),
        POST: (r) => updateProxy(r),
        PATCH: (r) => updateProxy(r),
        DELETE: async (r) => {
          await serial(() => registry.remove(r.params[0]!));
          return { status: 204 };
        },
      },
    },
    {
      pattern: new RegExp(`^/proxies/${segment}/toxics$`),
      methods: {
        GET: (r) => ({ status: 200, body: registry.get(r.params[0]!).toxics.map(toxicJson) }),
        POST: async (r) => {
          // §4: the proxy is looked up before the body is read.
          registry.get(r.params[0]!);
          const body = await r.body();
          // §4 create toxic: 200, not 201.
          return { status: 200, body: toxicJson(await serial(() => registry.addToxic(r.params[0]!, body))) };
        },
      },
    },
    {
      pattern: new RegExp(`^/proxies/${segment}/toxics/${segment}$`),
      methods: {
        GET: (r) => ({ status: 200, body: toxicJson(registry.toxic(r.params[0]!, r.params[1]!)) }),
        POST: (r) => updateToxic(r),
        PATCH: (r) => updateToxic(r),
        DELETE: async (r) => {
          await serial(() => registry.removeToxic(r.params[0]!, r.params[1]!));
          return { status: 204 };
        },
      },
    },
  ];

  async function updateProxy(r: Request): Promise<Reply> {
    registry.get(r.params[0]!);
    const fields = decodeProxyBody(await r.body());
    return { status: 200, body: await serial(() => registry.update(r.params[0]!, fields)) };
  }

  async function updateToxic(r: Request): Promise<Reply> {
    registry.toxic(r.params[0]!, r.params[1]!);
    const body = await r.body();
    return { status: 200, body: toxicJson(await serial(() => registry.updateToxic(r.params[0]!, r.params[1]!, body))) };
  }
}

function sendPlain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(text);
}

function sendJson(response: ServerResponse, status: number, text: string, contentType = 'application/json'): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

/**
 * The request listener of the API. Never throws: every failure becomes the
 * real server's status and body (§2), an unexpected one a logged 500.
 */
export function apiHandler(registry: ProxyRegistry, log: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  const table = routes(registry);
  return (request, response) => {
    void handle(table, request, response).catch((error: unknown) => {
      log.error({ err: error, method: request.method, url: request.url }, 'request failed');
      if (!response.headersSent) sendPlain(response, 500, goJson({ error: 'internal error', status: 500 }) + '\n');
      else response.destroy();
    });
  };

  async function handle(table: Route[], request: IncomingMessage, response: ServerResponse): Promise<void> {
    const rawPath = (request.url ?? '/').split('?')[0]!;
    let path: string;
    try {
      // gorilla/mux matches the decoded path, so %2F is a slash (§1: names with `/` cannot be addressed).
      path = decodeURIComponent(rawPath);
    } catch {
      sendPlain(response, 400, '400 Bad Request');
      return;
    }
    if (path === '/version') {
      if (request.method !== 'GET') return methodNotAllowed(response);
      if (browserBlocked(request, response)) return;
      // TOXIPROXY-API.md §9: a space after the colon, a newline, and its own content type.
      sendJson(response, 200, `{"version": "${TOXIPROXY_VERSION}"}\n`, 'application/json;charset=utf-8');
      return;
    }
    for (const route of table) {
      const match = route.pattern.exec(path);
      if (!match) continue;
      const handler = route.methods[request.method as Method];
      if (!handler) return methodNotAllowed(response);
      if (browserBlocked(request, response)) return;
      await reply(handler, match.slice(1), route.populateErrors === true, request, response);
      return;
    }
    // §1: no route is gorilla's plain-text 404, not the JSON error shape.
    sendPlain(response, 404, '404 page not found\n');
  }

  async function reply(
    handler: Handler,
    params: string[],
    populateErrors: boolean,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    let result: Reply;
    try {
      result = await handler({ params, body: () => readBody(request) });
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        response.setHeader('Connection', 'close');
        sendPlain(
          response,
          400,
          goJson({ error: 'bad request body: http: request body too large', status: 400 }) + '\n',
        );
        return;
      }
      if (error instanceof PopulateError) {
        // §2: /populate reports errors as JSON, with the proxies done so far and no newline.
        sendJson(
          response,
          error.status,
          goJson({ error: error.message, status: error.status, proxies: error.proxies }),
        );
        return;
      }
      if (!(error instanceof ApiError)) throw error;
      // §2: /populate's own validation errors keep the populate shape, with proxies null.
      if (populateErrors) {
        sendJson(response, error.status, goJson({ error: error.message, status: error.status, proxies: null }));
        return;
      }
      sendPlain(response, error.status, goJson({ error: error.message, status: error.status }) + '\n');
      return;
    }
    if (result.status === 204) {
      response.writeHead(204);
      response.end();
      return;
    }
    sendJson(response, result.status, goJson(result.body));
  }

  function browserBlocked(request: IncomingMessage, response: ServerResponse): boolean {
    response.setHeader('X-Toxiproxy-Request-Id', requestId());
    // §1: a request whose User-Agent starts with Mozilla/ is refused (403).
    if (!(request.headers['user-agent'] ?? '').startsWith('Mozilla/')) return false;
    sendPlain(response, 403, 'User agent not allowed\n');
    return true;
  }

  function methodNotAllowed(response: ServerResponse): void {
    // §1: gorilla's 405 has an empty body.
    response.writeHead(405, { 'Content-Length': 0 });
    response.end();
  }
}
