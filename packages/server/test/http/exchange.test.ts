// The one writer, driven directly on a port-0 server: what each send* puts on the wire and in the access log.
import type { IncomingMessage, RequestListener } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serveBare, type BareListener } from '../support/bare-listener.ts';
import { HttpRefusal } from '../../src/http/errors.ts';
import { exchangeOf, refuseBody, sendError, sendJson, sendResource, sendStream, type StaticResource, type StreamWriting } from '../../src/http/exchange.ts';
import { createLogger } from '../../src/logger.ts';
import type { StreamBody } from '../../src/stream/readiness.ts';
import { rawRequest } from './harness.ts';

const logs: Record<string, unknown>[] = [];
const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
const accessLines = () => logs.filter((line) => line['msg'] === 'request');
let served: BareListener | undefined;

afterEach(async () => {
  vi.restoreAllMocks();
  logs.length = 0;
  await served?.close();
  served = undefined;
});

async function serve(listener: RequestListener): Promise<string> {
  served = await serveBare(listener);
  return served.url;
}

/** A stream body that yields one frame, then waits forever; `released` settles when its iterator is returned. */
function idleBody(): { body: StreamBody; released: Promise<void> } {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let opened = false;
  const body: StreamBody = {
    [Symbol.asyncIterator]: () => ({
      next: () => (opened ? new Promise<IteratorResult<string>>(() => {}) : ((opened = true), Promise.resolve({ done: false, value: ': open\n\n' }))),
      return: async () => {
        release();
        return { done: true, value: undefined };
      },
    }),
  };
  return { body, released };
}

const writing: StreamWriting = { heartbeatMs: 60_000, heartbeatFrame: ':\n\n', maxBufferBytes: 1 << 20, kernelQueues: { bytes: () => 0 } };

describe('refuseBody', () => {
  const request = (method: string, headers: Record<string, string>) => ({ method, headers }) as unknown as IncomingMessage;

  it('lets a request without a body through, and one that declares an empty one', () => {
    expect(() => refuseBody(request('GET', {}))).not.toThrow();
    expect(() => refuseBody(request('GET', { 'content-length': '0' }))).not.toThrow();
  });

  it('refuses a chunked body and a declared one, naming the method', () => {
    expect(() => refuseBody(request('GET', { 'transfer-encoding': 'chunked' }))).toThrow(HttpRefusal);
    expect(() => refuseBody(request('HEAD', { 'content-length': '3' }))).toThrow('HEAD requests take no body; send parameters in the query string.');
  });
});

describe('sendJson', () => {
  it('writes a body in pieces (text and UTF-8 bytes) as exactly its bytes, with their Content-Length', async () => {
    const base = await serve((req, res) => sendJson(logger, req, res, 200, { serializedJson: ['{"name":', Buffer.from('"café"'), '}'] }));
    const response = await rawRequest(base, 'GET /piece HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(response.body).toBe('{"name":"café"}');
    expect(response.headers['content-length']).toBe(String(Buffer.byteLength('{"name":"café"}')));
  });

  it('sends CORS headers only to a request with an Origin', async () => {
    const base = await serve((req, res) => sendJson(logger, req, res, 200, { ok: true }));
    expect((await fetch(`${base}/x`)).headers.get('access-control-allow-origin')).toBeNull();
    expect((await fetch(`${base}/x`, { headers: { origin: 'https://shop.example' } })).headers.get('access-control-allow-origin')).toBe('*');
  });

  it('logs an answer outside any operation as operation "other", with its time in ms to two decimals', async () => {
    const now = vi.spyOn(performance, 'now').mockReturnValue(1000);
    const base = await serve((req, res) => {
      exchangeOf(req);
      now.mockReturnValue(1012.3456);
      sendJson(logger, req, res, 200, { ok: true });
    });
    await (await fetch(`${base}/unrouted`)).text();
    expect(accessLines()).toEqual([expect.objectContaining({ operation: 'other', path: '/unrouted', status: 200, ms: 12.35 })]);
  });
});

describe('sendResource', () => {
  const found: StaticResource = { contentType: 'text/plain', body: Buffer.from('hello'), etag: '"v1"', cacheControl: 'no-cache' };

  it('answers 200 with the body and its Content-Length, and logs the answer', async () => {
    const base = await serve((req, res) => sendResource(logger, req, res, found));
    const response = await fetch(`${base}/doc`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe('5');
    expect(await response.text()).toBe('hello');
    expect(accessLines()).toEqual([expect.objectContaining({ path: '/doc', status: 200 })]);
  });

  it.each(['"old", "v1"', '"old", *'])('answers 304 without a body or Content-Length to If-None-Match: %s', async (tags) => {
    const base = await serve((req, res) => sendResource(logger, req, res, found));
    const response = await fetch(`${base}/doc`, { headers: { 'if-none-match': tags } });
    expect(response.status).toBe(304);
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('etag')).toBe('"v1"');
    expect(accessLines()).toEqual([expect.objectContaining({ path: '/doc', status: 304 })]);
  });
});

describe('sendStream', () => {
  it('logs the stream answer with its head', async () => {
    const { body } = idleBody();
    const base = await serve((req, res) => void sendStream(logger, req, res, 200, { 'content-type': 'text/event-stream' }, body, writing));
    const response = await fetch(`${base}/stream`);
    expect(response.status).toBe(200);
    expect(accessLines()).toEqual([expect.objectContaining({ path: '/stream', status: 200 })]);
    await response.body?.cancel();
  });

  it('answers HEAD with the head alone and releases the body at once', async () => {
    const { body, released } = idleBody();
    let sent: Promise<void> | undefined;
    const base = await serve((req, res) => (sent = sendStream(logger, req, res, 200, { 'content-type': 'text/event-stream' }, body, writing)));
    const response = await fetch(`${base}/stream`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    await released;
    await sent;
  });

  it('releases the body without a head or an access line when the client has already left', async () => {
    const { body, released } = idleBody();
    let sent: Promise<void> | undefined;
    const base = await serve((req, res) => {
      res.once('close', () => (sent = sendStream(logger, req, res, 200, {}, body, writing)));
      req.socket.destroy();
    });
    await fetch(`${base}/stream`).catch(() => undefined);
    await released;
    await sent;
    expect(accessLines()).toEqual([]);
  });
});

describe('sendError', () => {
  it('logs an unexpected error once, and answers 500 with no-store', async () => {
    const base = await serve((req, res) => sendError(logger, req, res, new Error('disk on fire')));
    const response = await fetch(`${base}/x`);
    expect(response.status).toBe(500);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(logs.filter((line) => line['level'] === 'error')).toEqual([expect.objectContaining({ msg: 'unexpected error', path: '/x' })]);
  });

  it('keeps the refusal’s own headers beside the caller’s (RateLimit headers)', async () => {
    const refusal = new HttpRefusal('method_not_allowed', 'POST is not allowed here; use GET.', { allow: 'GET, HEAD' });
    const base = await serve((req, res) => sendError(logger, req, res, refusal, { ratelimit: '"pro";r=4;t=60' }));
    const response = await fetch(`${base}/x`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect(response.headers.get('ratelimit')).toBe('"pro";r=4;t=60');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('cuts the connection when the head is already out, rather than append an error body', async () => {
    const base = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
      sendError(logger, req, res, new Error('failed mid-answer'));
    });
    const outcome = await fetch(`${base}/x`)
      .then((response) => response.text())
      .then(
        () => 'complete',
        () => 'cut',
      );
    expect(outcome).toBe('cut');
    expect(logs.filter((line) => line['level'] === 'error')).toEqual([expect.objectContaining({ msg: 'unexpected error' })]);
  });
});
