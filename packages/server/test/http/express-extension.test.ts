// What an Express user does with the service: middleware that runs for every request of a listener
// (AppDeps.middleware, `catalog serve --middleware`), and the API mounted in an app of their own
// (catalogRouter). Neither is a way around authentication, validation or the error body.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { operations, type ApiOperationId } from '@catalog/contract';
import { buildCatalogProduct } from '@catalog/contract/testing';
import { catalogRouter } from '../../src/app.ts';
import { loadConfig } from '../../src/cli/command-line.ts';
import { serverOptionsFor } from '../../src/http/express-shell.ts';
import { operationsOf } from '../../src/http/operation-routes.ts';
import { silentLogger } from '../../src/logger.ts';
import { startService } from '../../src/main.ts';
import { openKeyStore } from '../../src/store/open-store.ts';
import { testAppDeps } from '../support/app-deps.ts';
import { FakeCatalogStore, FakeKeyStore } from '../support/fake-catalog-store.ts';
import { FREE_KEY, PRO_KEY, startApp, type RunningApp } from './harness.ts';

const product = buildCatalogProduct({ slug: 'nike-dunk-low' });
const pathOf = (operationId: ApiOperationId): string => operations[operationId].path.replace('{id}', product.slug);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function appWith(middleware: RequestHandler[]): Promise<RunningApp> {
  const app = await startApp({ middleware });
  app.store.catalog.push(product);
  cleanups.push(() => app.close());
  return app;
}

describe('AppDeps.middleware', () => {
  it.each(operationsOf('api'))('runs for %s before the operation, and what it sets reaches the answer', async (operationId) => {
    const seen: string[] = [];
    const app = await appWith([
      (req, res, next) => {
        seen.push(req.path);
        res.setHeader('x-tenant', 'acme');
        next();
      },
    ]);
    const response = await app.get(pathOf(operationId));
    expect(response.status).toBe(200);
    expect(response.headers.get('x-tenant')).toBe('acme');
    expect(response.headers.get('x-request-id')).not.toBeNull();
    expect(seen).toEqual([pathOf(operationId)]);
  });

  it('runs for the routes outside the contract, preflights and unknown paths too', async () => {
    const seen: string[] = [];
    const app = await appWith([(req, _res, next) => (seen.push(`${req.method} ${req.path}`), next())]);
    await app.get('/healthz', { key: null });
    await app.get('/nowhere', { key: null });
    await app.get('/v2/brands', { key: null, method: 'OPTIONS', headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' } });
    expect(seen).toEqual(['GET /healthz', 'GET /nowhere', 'OPTIONS /v2/brands']);
  });

  it('lets nothing past authentication, plans or validation', async () => {
    // A middleware that believes it vouches for the caller: the operations still decide.
    const app = await appWith([
      (req, _res, next) => {
        req.headers['x-authenticated-user'] = 'admin';
        next();
      },
    ]);
    expect((await app.get('/v2/brands', { key: null })).status).toBe(401);
    expect((await app.get('/v2/brands', { key: FREE_KEY })).status).toBe(403);
    const invalid = await app.get('/v2/variants?page=zero', { key: PRO_KEY });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('turns what a middleware passes on into the documented error body: an exposed 4xx keeps its message, anything else is an opaque 500', async () => {
    const app = await appWith([
      (req, _res, next) => {
        if (req.path === '/v2/brands') next(Object.assign(new Error('The tenant header is missing.'), { status: 400, expose: true }));
        else next(new Error('secret detail'));
      },
    ]);
    const refused = await app.get('/v2/brands');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ status: 'error', error: 'invalid_request', message: 'The tenant header is missing.' });
    const failed = await app.get('/gtin/count');
    expect(failed.status).toBe(500);
    const text = await failed.text();
    expect(JSON.parse(text)).toMatchObject({ status: 'error', error: 'internal_error' });
    expect(text).not.toContain('secret detail');
  });
});

describe('catalogRouter', () => {
  async function hostApp(): Promise<string> {
    const store = new FakeCatalogStore({ catalog: [product] });
    const keys = new FakeKeyStore({ [PRO_KEY]: 'pro', [FREE_KEY]: 'free' });
    const app = express();
    app.get('/status', (_req, res) => void res.type('text').end('host'));
    app.use('/catalog', catalogRouter(testAppDeps({ catalog: store, keys })));
    app.use((_req, res) => void res.status(404).end('host 404'));
    const server = http.createServer(serverOptionsFor(app), app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('serves the operations under the mount path, with the contract refusals, and leaves other paths to the host app', async () => {
    const base = await hostApp();
    const found = await fetch(`${base}/catalog/v2/products/${product.slug}`, { headers: { authorization: PRO_KEY } });
    expect(found.status).toBe(200);
    expect(((await found.json()) as { data: { slug: string } }).data.slug).toBe(product.slug);
    const anonymous = await fetch(`${base}/catalog/v2/brands`);
    expect([anonymous.status, ((await anonymous.json()) as { error: string }).error]).toEqual([401, 'unauthorized']);
    const wrongMethod = await fetch(`${base}/catalog/v2/brands`, { method: 'DELETE', headers: { authorization: PRO_KEY } });
    expect([wrongMethod.status, wrongMethod.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(await (await fetch(`${base}/catalog/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/status`)).text()).toBe('host');
    const unknown = await fetch(`${base}/catalog/nowhere`);
    expect([unknown.status, await unknown.text()]).toEqual([404, 'host 404']);
  });
});

describe('catalog serve --middleware', () => {
  it("runs the module's middleware for every request of both listeners, each asked for its own", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'middleware-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const keyStore = await openKeyStore(`sqlite:${path.join(dir, 'catalog.db')}`, silentLogger);
    const proKey = await keyStore.keys.createKey('pro');
    await keyStore.close();
    const module = path.join(dir, 'middleware.mjs');
    fs.writeFileSync(module, "export default (listener) => (req, res, next) => { res.setHeader('x-listener', listener); next(); };\n");
    const config = loadConfig(['--db', `sqlite:${path.join(dir, 'catalog.db')}`, '--host', '127.0.0.1', '--port', '0', '--sse-port', '0', '--log-level', 'error', '--shutdown-delay-ms', '0', '--middleware', module], {});
    const service = await startService(config, silentLogger);
    cleanups.push(() => service.close());
    const api = await fetch(`${service.apiUrl}/gtin/count`, { headers: { authorization: `Bearer ${proKey}` } });
    expect([api.status, api.headers.get('x-listener')]).toEqual([200, 'api']);
    const stream = await fetch(`${service.streamUrl}/v1/stream`, { method: 'HEAD', headers: { authorization: `Bearer ${proKey}`, topics: 'price:marketplacea:us' } });
    expect([stream.status, stream.headers.get('x-listener')]).toEqual([200, 'stream']);
    const anonymous = await fetch(`${service.streamUrl}/v1/stream`, { headers: { topics: 'price:marketplacea:us' } });
    expect([anonymous.status, anonymous.headers.get('x-listener')]).toEqual([401, 'stream']);
  });

  it('refuses to start with a module that has no default function, naming it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'middleware-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const module = path.join(dir, 'nothing.mjs');
    fs.writeFileSync(module, 'export const x = 1;\n');
    const config = loadConfig(['--db', `sqlite:${path.join(dir, 'catalog.db')}`, '--host', '127.0.0.1', '--port', '0', '--sse-port', '0', '--log-level', 'error', '--shutdown-delay-ms', '0', '--middleware', module], {});
    await expect(startService(config, silentLogger)).rejects.toThrow(`--middleware ${module} must export a default function`);
  });
});
