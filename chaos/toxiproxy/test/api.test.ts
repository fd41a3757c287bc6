// The HTTP API as Toxiproxy clients meet it (TOXIPROXY-API.md §2-§5, §8, §9):
// the node client for what works, raw fetch for exact statuses, bodies and
// headers of what does not.
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ToxiproxyError } from 'toxiproxy-node-client';
import {
  echoServer,
  proxyTo,
  recordingClient,
  splitAddress,
  startHarness,
  tcpServer,
  type Harness,
  type TestServer,
} from './helpers.js';

let harness: Harness;
let echo: TestServer;

beforeAll(async () => {
  harness = await startHarness();
  echo = await echoServer();
});
afterAll(async () => {
  await harness.close();
  await echo.close();
});
afterEach(async () => {
  for (const proxy of Object.values(await harness.client.getAll())) await proxy.remove();
});

async function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const sendsBody = body !== undefined && method !== 'GET';
  const response = await fetch(`${harness.url}${path}`, { method, headers, ...(sendsBody ? { body } : {}) });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    headers: response.headers,
    text: await response.text(),
  };
}

describe('proxies through toxiproxy-node-client', () => {
  it('creates a proxy on port 0 and reports the real bound address, which carries traffic', async () => {
    const proxy = await proxyTo(harness.client, 'p1', echo.address);
    expect(proxy.listen).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(proxy.listen).not.toBe('127.0.0.1:0');
    expect(proxy.enabled).toBe(true);
    const client = await recordingClient(proxy.listen);
    client.socket.write('ping');
    await client.waitForBytes(4);
    expect(client.received().toString()).toBe('ping');
    client.socket.destroy();
  });

  it('lists proxies keyed by name, gets one, and deletes it', async () => {
    await proxyTo(harness.client, 'b', echo.address);
    await proxyTo(harness.client, 'a', echo.address);
    const all = await harness.client.getAll();
    expect(Object.keys(all)).toEqual(['a', 'b']);
    expect((await harness.client.get('a')).upstream).toBe(echo.address);
    await all.a!.remove();
    await expect(harness.client.get('a')).rejects.toThrow('Request failed with status code 404');
  });

  it('refuses a duplicate name with 409', async () => {
    await proxyTo(harness.client, 'dup', echo.address);
    const error = await proxyTo(harness.client, 'dup', echo.address).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToxiproxyError);
    expect((error as Error).message).toBe('Request failed with status code 409');
  });

  it('disabling closes the listener and live connections with a FIN; enabling rebinds the same port', async () => {
    const proxy = await proxyTo(harness.client, 'down', echo.address);
    const client = await recordingClient(proxy.listen);
    client.socket.write('x');
    await client.waitForBytes(1);
    const disabled = await proxy.update({ enabled: false } as never);
    expect(disabled.enabled).toBe(false);
    expect(await client.ended).toEqual({ kind: 'end' });
    const [host, port] = splitAddress(proxy.listen);
    const refused = await new Promise<string | undefined>((resolve) => {
      const socket = connect({ host, port });
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code));
    });
    expect(refused).toBe('ECONNREFUSED');
    const enabled = await disabled.update({ enabled: true } as never);
    expect(enabled.listen).toBe(proxy.listen);
    const again = await recordingClient(enabled.listen);
    again.socket.write('y');
    await again.waitForBytes(1);
    again.socket.destroy();
  });

  it('a created-disabled proxy keeps its listen string until enabled', async () => {
    const proxy = await harness.client.createProxy({
      name: 'off',
      listen: '127.0.0.1:0',
      upstream: echo.address,
      enabled: false,
    });
    expect(proxy.listen).toBe('127.0.0.1:0');
    expect(proxy.enabled).toBe(false);
    const on = await proxy.update({ enabled: true } as never);
    expect(on.listen).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
  });

  it('re-sending listen 127.0.0.1:0 restarts on a new port; localhost:P equals 127.0.0.1:P', async () => {
    const proxy = await proxyTo(harness.client, 'moves', echo.address);
    const same = await proxy.update({ listen: proxy.listen.replace('127.0.0.1', 'localhost') } as never);
    expect(same.listen).toBe(proxy.listen);
    const moved = await proxy.update({ listen: '127.0.0.1:0' } as never);
    expect(moved.listen).not.toBe(proxy.listen);
    expect(moved.enabled).toBe(true);
  });

  it('a new upstream alone restarts the proxy on its port, still enabled, and new connections reach it', async () => {
    const other = await tcpServer((socket) => socket.end('other'));
    try {
      const proxy = await proxyTo(harness.client, 'repointed', echo.address);
      const before = await recordingClient(proxy.listen);
      const repointed = await proxy.update({ upstream: other.address } as never);
      expect(repointed).toMatchObject({ listen: proxy.listen, upstream: other.address, enabled: true });
      // The restart closed the live connection; a new one reaches the new upstream.
      expect(await before.ended).toEqual({ kind: 'end' });
      const after = await recordingClient(proxy.listen);
      await after.waitForBytes(5);
      expect(after.received().toString()).toBe('other');
    } finally {
      await other.close();
    }
  });

  it('populates: creates, keeps an identical entry untouched, replaces a changed one', async () => {
    const first = await harness.client.populate([
      { name: 'pa', listen: '127.0.0.1:0', upstream: echo.address },
      { name: 'pb', listen: '127.0.0.1:0', upstream: echo.address },
    ]);
    const pa = first.pa!;
    await pa.addToxic({ type: 'latency', attributes: { latency: 10, jitter: 0 } } as never);
    const second = await harness.client.populate([
      { name: 'pa', listen: pa.listen, upstream: echo.address },
      { name: 'pb', listen: '127.0.0.1:0', upstream: echo.address },
    ]);
    expect(second.pa!.listen).toBe(pa.listen);
    expect((await pa.getToxic('latency_downstream')).attributes).toEqual({ latency: 10, jitter: 0 });
    expect(second.pb!.listen).not.toBe(first.pb!.listen);
  });

  it('reset re-enables every proxy and removes every toxic', async () => {
    const proxy = await proxyTo(harness.client, 'r', echo.address);
    await proxy.addToxic({ type: 'latency', attributes: { latency: 10, jitter: 0 } } as never);
    await proxy.update({ enabled: false } as never);
    await harness.client.reset();
    const after = await raw('GET', '/proxies/r');
    expect(JSON.parse(after.text)).toMatchObject({ enabled: true, toxics: [] });
  });

  it('reports the version with the real server body', async () => {
    expect(await harness.client.getVersion()).toBe('{"version": "2.12.0"}\n');
  });
});

describe('toxics through toxiproxy-node-client', () => {
  it('adds with defaults, gets, merges an update, removes', async () => {
    const proxy = await proxyTo(harness.client, 't', echo.address);
    const toxic = await proxy.addToxic({ type: 'latency', attributes: { latency: 300 } } as never);
    expect(toxic.toJson()).toEqual({
      attributes: { latency: 300, jitter: 0 },
      name: 'latency_downstream',
      stream: 'downstream',
      toxicity: 1,
      type: 'latency',
    });
    const updated = await toxic.update({ attributes: { jitter: 10 }, name: 'ignored', stream: 'upstream' } as never);
    expect(updated.toJson()).toMatchObject({
      attributes: { latency: 300, jitter: 10 },
      name: 'latency_downstream',
      stream: 'downstream',
    });
    expect((await proxy.getToxic('latency_downstream')).attributes).toEqual({ latency: 300, jitter: 10 });
    await updated.remove();
    await expect(proxy.getToxic('latency_downstream')).rejects.toThrow('status code 404');
  });

  it('echoes the stream as sent, names by it, lists upstream toxics first, and refuses a duplicate with 409', async () => {
    const proxy = await proxyTo(harness.client, 'u', echo.address);
    await proxy.addToxic({ type: 'bandwidth', attributes: { rate: 5 } } as never);
    const up = await proxy.addToxic({ type: 'slicer', stream: 'UPSTREAM', toxicity: 0.1, attributes: {} } as never);
    expect(up.toJson()).toMatchObject({ name: 'slicer_UPSTREAM', stream: 'UPSTREAM', toxicity: 0.1 });
    expect(up.attributes).toEqual({ average_size: 0, size_variation: 0, delay: 0 });
    const listed = JSON.parse((await raw('GET', '/proxies/u/toxics')).text) as { name: string }[];
    expect(listed.map((t) => t.name)).toEqual(['slicer_UPSTREAM', 'bandwidth_downstream']);
    await expect(proxy.addToxic({ type: 'bandwidth', attributes: {} } as never)).rejects.toThrow('status code 409');
  });

  it('creates every toxic type of 2.12 and lists all of its attributes', async () => {
    const proxy = await proxyTo(harness.client, 'all', echo.address);
    const expected: Record<string, Record<string, number>> = {
      latency: { latency: 0, jitter: 0 },
      bandwidth: { rate: 0 },
      slow_close: { delay: 0 },
      timeout: { timeout: 0 },
      reset_peer: { timeout: 0 },
      slicer: { average_size: 0, size_variation: 0, delay: 0 },
      limit_data: { bytes: 0 },
      noop: {},
    };
    for (const [type, attributes] of Object.entries(expected)) {
      const toxic = await proxy.addToxic({ type, stream: 'upstream', attributes: null } as never);
      expect(toxic.attributes).toEqual(attributes);
    }
  });
});

describe('errors over raw HTTP', () => {
  const plain = 'text/plain; charset=utf-8';
  const error = (message: string, status: number) => `{"error":${JSON.stringify(message)},"status":${status}}\n`;

  it.each([
    ['POST', '/proxies', '', 400, 'bad request body: EOF'],
    ['POST', '/proxies', 'garbage', 400, "bad request body: invalid character 'g' looking for beginning of value"],
    [
      'POST',
      '/proxies',
      '{"name":5}',
      400,
      'bad request body: json: cannot unmarshal number into Go struct field Proxy.name of type string',
    ],
    ['POST', '/proxies', '{"upstream":"x:1"}', 400, 'missing required field: name'],
    ['POST', '/proxies', '{"name":"n"}', 400, 'missing required field: upstream'],
    [
      'POST',
      '/proxies',
      '{"name":"n","upstream":"x:1","listen":"bad:addr:x"}',
      500,
      'address bad:addr:x: too many colons in address',
    ],
    ['GET', '/proxies/nope', undefined, 404, 'proxy not found'],
    ['DELETE', '/proxies/nope', undefined, 404, 'proxy not found'],
    ['POST', '/proxies/nope/toxics', '{"type":"latency"}', 404, 'proxy not found'],
  ])('%s %s %j → %i', async (method, path, body, status, message) => {
    const response = await raw(method, path, body);
    expect(response).toMatchObject({ status, type: plain, text: error(message, status) });
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it.each([
    ['{"type":"latency","stream":"sideways"}', 400, 'stream was invalid, can be either upstream or downstream'],
    ['{"type":"down"}', 400, 'invalid toxic type'],
    ['{}', 400, 'invalid toxic type'],
    [
      '{"type":"timeout","attributes":{"timeout":"x"}}',
      400,
      'bad request body: json: cannot unmarshal string into Go struct field TimeoutToxic.attributes.timeout of type int64',
    ],
    [
      '{"type":"latency","attributes":{"latency":1.5}}',
      400,
      'bad request body: json: cannot unmarshal number 1.5 into Go struct field LatencyToxic.attributes.latency of type int64',
    ],
    ['{"type":"latency"} trailing junk is ignored', 200, undefined],
  ])('create toxic %s → %i', async (body, status, message) => {
    await proxyTo(harness.client, 'e', echo.address);
    const response = await raw('POST', '/proxies/e/toxics', body);
    expect(response.status).toBe(status);
    if (message !== undefined) expect(response).toMatchObject({ type: plain, text: error(message, status) });
    else expect(response.type).toBe('application/json');
  });

  it('refuses a duplicate toxic with 409 and an unknown toxic with 404', async () => {
    await proxyTo(harness.client, 'e2', echo.address);
    expect((await raw('POST', '/proxies/e2/toxics', '{"type":"noop"}')).status).toBe(200);
    expect(await raw('POST', '/proxies/e2/toxics', '{"type":"noop"}')).toMatchObject({
      status: 409,
      text: error('toxic already exists', 409),
    });
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) {
      expect(await raw(method, '/proxies/e2/toxics/none', '{}')).toMatchObject({
        status: 404,
        text: error('toxic not found', 404),
      });
    }
  });

  it('returns 409 for a taken proxy name and 500 with the bind error for a taken port', async () => {
    const proxy = await proxyTo(harness.client, 'taken', echo.address);
    expect(await raw('POST', '/proxies', JSON.stringify({ name: 'taken', upstream: 'x:1' }))).toMatchObject({
      status: 409,
      text: error('proxy already exists', 409),
    });
    const clash = await raw(
      'POST',
      '/proxies',
      JSON.stringify({ name: 'clash', listen: proxy.listen, upstream: 'x:1' }),
    );
    expect(clash).toMatchObject({
      status: 500,
      text: error(`listen tcp ${proxy.listen}: bind: address already in use`, 500),
    });
    expect((await raw('GET', '/proxies/clash')).status).toBe(404);
  });

  it('answers an unknown path with the plain 404 and a wrong method with an empty 405', async () => {
    expect(await raw('GET', '/nope')).toMatchObject({ status: 404, type: plain, text: '404 page not found\n' });
    expect(await raw('GET', '/metrics')).toMatchObject({ status: 404, text: '404 page not found\n' });
    for (const [method, path] of [
      ['PUT', '/proxies/x'],
      ['DELETE', '/proxies'],
      ['POST', '/version'],
      ['GET', '/reset'],
    ] as const) {
      expect(await raw(method, path)).toMatchObject({ status: 405, text: '' });
    }
  });

  it('blocks browsers with 403 and tags routed responses with a request id', async () => {
    const blocked = await raw('GET', '/proxies', undefined, { 'User-Agent': 'Mozilla/5.0 (X11)' });
    expect(blocked).toMatchObject({ status: 403, type: plain, text: 'User agent not allowed\n' });
    const ok = await raw('GET', '/proxies');
    expect(ok).toMatchObject({ status: 200, type: 'application/json', text: '{}' });
    expect(ok.headers.get('x-toxiproxy-request-id')).toMatch(/^[0-9a-v]{20}$/);
  });

  it('serves /version with its own content type and exact bytes', async () => {
    const response = await raw('GET', '/version');
    expect(response).toMatchObject({
      status: 200,
      type: 'application/json;charset=utf-8',
      text: '{"version": "2.12.0"}\n',
    });
  });

  it('answers populate errors as JSON with the proxies done so far', async () => {
    expect(await raw('POST', '/populate', '[]')).toMatchObject({ status: 201, text: '{"proxies":null}' });
    expect(await raw('POST', '/populate', '{}')).toMatchObject({
      status: 400,
      type: 'application/json',
      text: '{"error":"bad request body: json: cannot unmarshal object into Go value of type []toxiproxy.Proxy","status":400,"proxies":null}',
    });
    expect(await raw('POST', '/populate', '[{"name":"a","upstream":"x:1"},{"upstream":"x:1"}]')).toMatchObject({
      status: 400,
      text: '{"error":"missing required field: name at proxy 2","status":400,"proxies":null}',
    });
    expect((await raw('GET', '/proxies/a')).status).toBe(404);
    const holder = await proxyTo(harness.client, 'holder', echo.address);
    const partial = await raw(
      'POST',
      '/populate',
      JSON.stringify([
        { name: 'ok', listen: '127.0.0.1:0', upstream: echo.address },
        { name: 'bad', listen: holder.listen, upstream: echo.address },
      ]),
    );
    expect(partial.status).toBe(500);
    expect(partial.type).toBe('application/json');
    const body = JSON.parse(partial.text) as { error: string; proxies: { name: string }[] };
    expect(body.error).toBe(`listen tcp ${holder.listen}: bind: address already in use`);
    expect(body.proxies.map((p) => p.name)).toEqual(['ok']);
  });

  it('reset stops with 500 at a proxy that cannot rebind', async () => {
    const proxy = await proxyTo(harness.client, 'rebind', echo.address);
    const disabled = await proxy.update({ enabled: false } as never);
    const squatter = await proxyTo(harness.client, 'squatter', echo.address);
    await squatter.update({ listen: disabled.listen } as never);
    const response = await raw('POST', '/reset');
    expect(response).toMatchObject({
      status: 500,
      text: error(`listen tcp ${proxy.listen}: bind: address already in use`, 500),
    });
  });

  it('survives hostile bodies and keeps serving', async () => {
    const deep = '['.repeat(20_000);
    expect((await raw('POST', '/proxies', deep)).status).toBe(400);
    expect((await raw('POST', '/proxies', 'x'.repeat(2 * 1024 * 1024))).status).toBe(400);
    expect((await raw('POST', '/proxies', '{"name":"\\u12"}')).text).toBe(
      error("bad request body: invalid character '\"' in \\u hexadecimal character escape", 400),
    );
    expect((await raw('GET', '/proxies')).status).toBe(200);
  });
});
