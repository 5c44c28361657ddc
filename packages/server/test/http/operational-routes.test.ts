import { afterEach, describe, expect, it } from 'vitest';
import { ServiceUnavailable, StillStarting } from '../../src/catalog/errors.ts';
import { asyncapiDocument } from '@catalog/contract/documents';
import { openapiDocument } from '@catalog/contract/documents';
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

  it('/readyz answers 503 while a part is still starting, and logs it at debug, not as a failed check', async () => {
    app = await startApp({
      readiness: [
        { name: 'catalog database', ping: async () => {} },
        { name: 'storefront index', ping: () => Promise.reject(new StillStarting('storefront index (loading)')) },
        { name: 'price log', ping: () => Promise.reject(new ServiceUnavailable('price log')) },
      ],
    });
    const response = await app.get('/readyz', { key: null });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { message: string }).message).toBe('The storefront index and price log is unavailable; retry shortly.');
    const about = (check: string): Record<string, unknown>[] => app.logs.filter((line) => line['check'] === check);
    expect(about('storefront index').map((line) => [line['level'], line['msg'], line['error']])).toStrictEqual([['debug', 'not ready yet', undefined]]);
    expect(about('price log').map((line) => [line['level'], line['msg']])).toStrictEqual([['warn', 'readiness check failed']]);
  });

  it('/readyz pings the catalog store by default', async () => {
    app = await startApp({ store: unavailableStore() });
    const response = await app.get('/readyz', { key: null });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { message: string }).message).toContain('catalog database');
  });

  it.each([
    ['/openapi.json', openapiDocument],
    ['/asyncapi.json', asyncapiDocument],
  ])('%s serves the bundled document with an ETag, and 304 to a client that holds it', async (path, document) => {
    app = await startApp();
    const response = await app.get(path, { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(await response.json()).toEqual(document);
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await app.get(path, { key: null, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await app.get(path, { key: null, headers: { 'if-none-match': '"other"' } })).status).toBe(200);
  });

  it('/docs and /docs/stream load their renderers from this server only, assets cached for good', async () => {
    app = await startApp();
    for (const [path, document] of [['/docs', '/openapi.json'], ['/docs/stream', '/asyncapi.json']] as const) {
      const response = await app.get(path, { key: null });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      const html = await response.text();
      expect(html).toContain(document);
      expect(html).not.toMatch(/(src|href)="https?:/);
      const assets = [...html.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((match) => match[1]!);
      expect(assets.length).toBeGreaterThan(0);
      for (const asset of assets) {
        const served = await app.get(asset, { key: null });
        expect(served.status, asset).toBe(200);
        expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
        expect((await served.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
      }
    }
  });

  it('serves a Redoc that asks no other site for its sidebar logo', async () => {
    app = await startApp();
    const html = await (await app.get('/docs', { key: null })).text();
    const bundle = /src="(\/docs\/assets\/redoc-[^"]+)"/.exec(html)?.[1];
    expect(bundle).toBeDefined();
    const script = await (await app.get(bundle!, { key: null })).text();
    expect(script.includes('redocly logo')).toBe(true);
    expect(script.includes('cdn.redoc.ly')).toBe(false);
  });

  it('matches its paths as the operations do: any letter case, one trailing slash', async () => {
    app = await startApp();
    for (const path of ['/HealthZ', '/healthz/', '/openapi.json/']) {
      expect((await app.get(path, { key: null })).status, path).toBe(200);
    }
    expect((await app.get('/healthz//', { key: null })).status).toBe(404);
  });

  it('answers HEAD with the head of GET and no body', async () => {
    app = await startApp();
    const get = await app.get('/openapi.json', { key: null });
    const head = await app.get('/openapi.json', { key: null, method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(await head.text()).toBe('');
  });

  it('answers other methods with 405 and Allow', async () => {
    app = await startApp();
    const response = await app.get('/healthz', { method: 'POST', key: null });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expectErrorBody(await response.json());
  });
});
