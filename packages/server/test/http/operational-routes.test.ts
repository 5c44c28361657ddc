import { afterEach, describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { openapiDocument } from '../../src/generated/openapi.gen.ts';
import { FakeCatalogStore, unavailableStore } from '../support/fake-catalog-store.ts';
import { expectErrorBody } from '../support/spec-validator.ts';
import { startApp, type RunningApp } from './harness.ts';

describe('operational endpoints', () => {
  let app: RunningApp;
  afterEach(() => app.close());

  it('/healthz answers 200 without a key, even when the store is down', async () => {
    app = await startApp({ store: unavailableStore() });
    const response = await app.get('/healthz', { key: null });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('/readyz answers 200 when every check passes', async () => {
    app = await startApp({ store: new FakeCatalogStore() });
    const response = await app.get('/readyz', { key: null });
    expect(response.status).toBe(200);
  });

  it('/readyz answers 503 naming what is down', async () => {
    app = await startApp({
      readiness: [
        { name: 'catalog database', ping: async () => {} },
        { name: 'price log', ping: () => Promise.reject(new ServiceUnavailable('price log')) },
      ],
    });
    const response = await app.get('/readyz', { key: null });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeTruthy();
    const body = (await response.json()) as { error: string; message: string };
    expectErrorBody(body);
    expect(body).toMatchObject({ error: 'service_unavailable', message: 'The price log is unavailable; retry shortly.' });
  });

  it('/readyz pings the catalog store by default', async () => {
    app = await startApp({ store: unavailableStore() });
    const response = await app.get('/readyz', { key: null });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { message: string }).message).toContain('catalog database');
  });

  it('/openapi.json serves the bundled document', async () => {
    app = await startApp();
    const response = await app.get('/openapi.json', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual(openapiDocument);
  });

  it('/docs renders every operation, parameter and schema in one self-contained page', async () => {
    app = await startApp();
    const response = await app.get('/docs', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    for (const text of ['listStorefrontProducts', 'searchVariants', 'listTopBrands', 'getProduct', 'countGtins', 'shop_name', 'CatalogProductFree', 'ErrorBody']) {
      expect(html).toContain(text);
    }
    expect(html).not.toMatch(/<script|https?:\/\/[^"]*\.(js|css)/);
  });

  it('answers other methods with 405 and Allow', async () => {
    app = await startApp();
    const response = await app.get('/healthz', { method: 'POST', key: null });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expectErrorBody(await response.json());
  });
});
