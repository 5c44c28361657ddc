// Refusals from every layer share one body and carry X-Request-Id.
import { afterEach, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/http/rate-limit.ts';
import { ProductNotFound, ServiceUnavailable } from '../../src/catalog/errors.ts';
import { HttpRefusal, SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS, toErrorResponse } from '../../src/http/errors.ts';
import { FakeCatalogStore, FakeKeyStore } from '../support/fake-catalog-store.ts';
import { buildCatalogProduct } from '@catalog/contract/testing';
import { expectErrorBody, expectMatchesSpec } from '../support/spec-validator.ts';
import { FREE_KEY, PRO_KEY, rawRequest, startApp, type RunningApp } from './harness.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('errors', () => {
  let app: RunningApp;
  afterEach(() => app.close());

  it('returns 404 in the error body for an unknown path', async () => {
    app = await startApp();
    const response = await app.get('/v2/nothing?x=1');
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: string; query: unknown };
    expectErrorBody(body);
    expect(body).toMatchObject({ error: 'not_found', query: { x: '1' } });
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])('returns 405 with Allow for %s on an operation path', async (method) => {
    app = await startApp();
    const response = await app.get('/v2/brands', { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    const body = (await response.json()) as { error: string; message: string };
    expectMatchesSpec('listTopBrands', 405, body);
    expect(body).toMatchObject({ error: 'method_not_allowed', message: `${method} is not allowed here; use GET.` });
  });

  it('returns 405 for a POST with a body on a product path', async () => {
    app = await startApp();
    const response = await app.get('/v2/products/x', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(405);
    expectMatchesSpec('getProduct', 405, await response.json());
  });

  it('returns 400 for a GET that carries a body', async () => {
    app = await startApp();
    const response = await rawRequest(
      app.base,
      `GET /v2/brands HTTP/1.1\r\nHost: x\r\nAuthorization: ${PRO_KEY}\r\nContent-Type: application/json\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{"a":1}`,
    );
    expect(response.status).toBe(400);
    const body = JSON.parse(response.body) as { error: string; message: string };
    // listTopBrands documents no 400 (see the report): the body is checked against ErrorBody alone.
    expectErrorBody(body);
    expect(body).toMatchObject({ error: 'invalid_request', message: 'GET requests take no body; send parameters in the query string.' });
    expect(response.headers['x-request-id']).toMatch(UUID);
  });

  it('returns 400 for a path with malformed percent-encoding', async () => {
    app = await startApp();
    const response = await rawRequest(app.base, `GET /v2/products/%E0%A4%A HTTP/1.1\r\nHost: x\r\nAuthorization: ${PRO_KEY}\r\nConnection: close\r\n\r\n`);
    expect(response.status).toBe(400);
    const body = JSON.parse(response.body) as { error: string; message: string };
    expectMatchesSpec('getProduct', 400, body);
    expect(body.message).toContain('malformed');
    expect(response.headers['x-request-id']).toMatch(UUID);
  });

  it('echoes a sane X-Request-Id and replaces one that is not', async () => {
    app = await startApp();
    const echoed = await app.get('/v2/brands', { headers: { 'x-request-id': 'trace-1234.abc' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-1234.abc');
    const replaced = await app.get('/v2/brands', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(UUID);
    const tooLong = await app.get('/v2/brands', { headers: { 'x-request-id': 'a'.repeat(129) } });
    expect(tooLong.headers.get('x-request-id')).toMatch(UUID);
  });

  it('returns 500 without internals for an unexpected error and logs it once with the request id', async () => {
    app = await startApp({ store: new FakeCatalogStore({ failure: new Error('disk on fire at /var/lib/secret') }) });
    const response = await app.get('/v2/products/x', { headers: { 'x-request-id': 'req-500' } });
    expect(response.status).toBe(500);
    const text = await response.text();
    const body = JSON.parse(text) as { error: string; message: string };
    expectMatchesSpec('getProduct', 500, body);
    expect(body.error).toBe('internal_error');
    expect(body.message).toContain('X-Request-Id');
    expect(text).not.toContain('disk on fire');
    expect(text).not.toContain('at ');
    const errors = app.logs.filter((line) => line['level'] === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ request_id: 'req-500', error: { message: 'disk on fire at /var/lib/secret' } });
  });

  it('returns 503 with Retry-After when the store is unavailable', async () => {
    app = await startApp({ store: new FakeCatalogStore({ failure: new ServiceUnavailable('catalog database') }) });
    const response = await app.get('/v2/variants?sku=x');
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await response.json()) as { error: string; message: string; query: unknown };
    expectMatchesSpec('searchVariants', 503, body);
    expect(body).toMatchObject({ error: 'service_unavailable', message: 'The catalog database is unavailable; retry shortly.', query: { sku: 'x' } });
    expect(app.logs.filter((line) => line['level'] === 'error')).toEqual([]);
  });

  it('returns 429 with Retry-After and RateLimit headers once a key exceeds its plan quota, other keys unaffected', async () => {
    app = await startApp({ rateLimiter: createRateLimiter({ perMinute: { free: 2, pro: 3 }, authFailuresPerMinute: 0 }) });
    for (let remaining = 2; remaining >= 0; remaining--) {
      const ok = await app.get('/gtin/count', { key: PRO_KEY });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-policy')).toBe('"pro";q=3;w=60');
      expect(ok.headers.get('ratelimit')).toMatch(new RegExp(`^"pro";r=${remaining};t=\\d+$`));
    }
    const response = await app.get('/gtin/count', { key: PRO_KEY });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(response.headers.get('ratelimit')).toMatch(/^"pro";r=0;t=\d+$/);
    const body = (await response.json()) as { error: string; message: string };
    expectMatchesSpec('countGtins', 429, body);
    expect(body.message).toMatch(/^Rate limit of 3 requests per minute for the pro plan exceeded; retry in \d+ seconds?\.$/);
    expect((await app.get('/v2/brands', { key: FREE_KEY })).status).toBe(403);
    expect((await app.get('/gtin/count', { key: FREE_KEY })).headers.get('ratelimit-policy')).toBe('"free";q=2;w=60');
  });

  it('answers 429 instead of 401 once an address has failed authentication too often, and still serves valid keys', async () => {
    const keys = new FakeKeyStore({ [PRO_KEY]: 'pro', [FREE_KEY]: 'free' });
    app = await startApp({ keys, rateLimiter: createRateLimiter({ perMinute: { free: 0, pro: 0 }, authFailuresPerMinute: 3 }) });
    expect((await app.get('/gtin/count', { key: PRO_KEY })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await app.get('/gtin/count', { key: `unknown-${i}` })).status).toBe(401);
    const refused = await app.get('/gtin/count', { key: 'unknown-4' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as { error: string; message: string };
    expectMatchesSpec('countGtins', 429, body);
    expect(body.message).toMatch(/missing or unknown API key from this address/);
    expect((await app.get('/gtin/count', { key: null })).status).toBe(429);
    // Neither a key in use nor one never seen before is refused for the failures of its address.
    expect((await app.get('/gtin/count', { key: PRO_KEY })).status).toBe(200);
    expect((await app.get('/gtin/count', { key: FREE_KEY })).status).toBe(200);
  });

  it('answers 503 in the error body once a request passes its deadline, and drops the late answer', async () => {
    const store = new FakeCatalogStore();
    let release: (value: null) => void = () => {};
    store.getProductDocument = () => new Promise((resolve) => (release = resolve));
    app = await startApp({ store, requestTimeoutMs: 200 });
    const started = performance.now();
    const response = await app.get('/v2/products/stuck');
    expect(response.status).toBe(503);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await response.json()) as { error: string; message: string };
    expectMatchesSpec('getProduct', 503, body);
    expect(body.message).toBe('The request did not complete within 0.2 s; retry shortly.');
    release(null);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(app.logs.filter((line) => line['level'] === 'error')).toEqual([]);
    expect(app.logs.filter((line) => line['msg'] === 'request').map((line) => line['status'])).toEqual([503]);
  });

  it('writes one structured access log line per request', async () => {
    app = await startApp();
    app.store.catalog.push(buildCatalogProduct({ slug: 'logged' }));
    await app.get('/v2/products/logged?', { headers: { 'x-request-id': 'req-log' } });
    const lines = app.logs.filter((line) => line['msg'] === 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', method: 'GET', path: '/v2/products/logged', status: 200, request_id: 'req-log' });
    expect(typeof lines[0]!['ms']).toBe('number');
  });
});

describe('toErrorResponse', () => {
  it('adds Retry-After to a 503 only', () => {
    expect(toErrorResponse(new ServiceUnavailable('the catalog store'), {}).headers).toEqual({ 'retry-after': String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS) });
    expect(toErrorResponse(new ProductNotFound('x'), {}).headers).toEqual({});
    expect(toErrorResponse(new HttpRefusal('unauthorized', 'No key.', { 'www-authenticate': 'Bearer' }), {}).headers).toEqual({ 'www-authenticate': 'Bearer' });
  });

  it("keeps a refusal's own Retry-After", () => {
    expect(toErrorResponse(new HttpRefusal('service_unavailable', 'Busy.', { 'retry-after': '30' }), {}).headers).toEqual({ 'retry-after': '30' });
    expect(toErrorResponse(new HttpRefusal('rate_limited', 'Slow down.', { 'retry-after': '12' }), {}).headers).toEqual({ 'retry-after': '12' });
  });
});
