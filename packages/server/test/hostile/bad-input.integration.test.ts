// Hostile-looking input against the real app on both engines: every one is a 400 in the contract's
// error shape that names the problem, never a 500 (issue: bounded cost under hostile use).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { testAppDeps } from '../support/app-deps.ts';
import { controlCharacterIn } from '../../src/http/query-string.ts';
import { createLogger } from '../../src/logger.ts';
import { openCatalogStores, type CatalogStores } from '../../src/store/open-store.ts';
import { buildCatalogProduct, buildStorefrontProductInput } from '@catalog/contract/testing';
import { createTestDatabase, type TestDatabase } from '../support/postgres-test-database.ts';
import { expectMatchesSpec } from '../support/spec-validator.ts';

const HOSTILE: { name: string; path: string; problem: RegExp }[] = [
  { name: 'a cursor above 2^63', path: '/v3/storefront/products?filters=cursor%20%3E%20100000000000000000000', problem: /out of range/ },
  { name: 'a 400-digit cursor', path: `/v3/storefront/products?filters=cursor%20%3E%20${'9'.repeat(400)}`, problem: /out of range/ },
  { name: 'a negative 400-digit cursor', path: `/v3/storefront/products?filters=cursor%20%3C%20-${'9'.repeat(400)}`, problem: /out of range/ },
  { name: 'a price of 1e400', path: '/v3/storefront/products?filters=price_min%20%3E%201e400', problem: /needs a number/ },
  { name: 'a NUL in query', path: '/v3/storefront/products?query=a%00b', problem: /control character U\+0000/ },
  { name: 'a NUL in a filter string', path: '/v3/storefront/products?filters=brand%20%3D%20%22a%00b%22', problem: /control character U\+0000/ },
  { name: 'an escape character in shop_name', path: '/v3/storefront/products?shop_name=a%1Bb', problem: /control character U\+001B/ },
  { name: 'a DEL in a SKU', path: '/v2/variants?sku=DD1391%7F', problem: /control character U\+007F/ },
  { name: 'a NUL in a product slug', path: '/v2/products/air%00max', problem: /control character U\+0000/ },
];

describe.each(['sqlite', 'postgres'] as const)('hostile input on %s', (engine) => {
  let stores: CatalogStores;
  let server: http.Server;
  let base: string;
  let directory: string | undefined;
  let database: TestDatabase | undefined;
  let proKey: string;

  beforeAll(async () => {
    const logger = createLogger({ level: 'error', write: () => undefined });
    if (engine === 'sqlite') {
      directory = mkdtempSync(join(tmpdir(), 'catalog-hostile-'));
      stores = await openCatalogStores(`sqlite:${join(directory, 'catalog.db')}`, logger);
    } else {
      database = await createTestDatabase();
      stores = await openCatalogStores(database.url(), logger);
    }
    await stores.catalog.upsertCatalogProducts([buildCatalogProduct()]);
    await stores.catalog.upsertStorefrontProducts([buildStorefrontProductInput()]);
    proKey = await stores.keys.createKey('pro', 'hostile');
    server = http.createServer(createApp(testAppDeps({ catalog: stores.catalog, keys: stores.keys, logger })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await stores.close();
    await database?.drop();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it.each(HOSTILE)('answers 400 naming the problem for $name', async ({ path, problem }) => {
    const response = await fetch(base + path, { headers: { authorization: proKey } });
    const body = (await response.json()) as { status: string; error: string; message: string };
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(body.status).toBe('error');
    expect(body.message).toMatch(problem);
    // The message never echoes a 400-digit number or a raw control character back.
    expect(body.message.length).toBeLessThan(300);
    expect(controlCharacterIn(body.message)).toBeNull();
  });

  it('still answers a valid cursor filter at the top of the 64-bit range', async () => {
    const response = await fetch(`${base}/v3/storefront/products?filters=cursor%20%3E%209223372036854775807`, { headers: { authorization: proKey } });
    expect(response.status).toBe(400);
    const within = await fetch(`${base}/v3/storefront/products?filters=cursor%20%3E%209223372036854774784`, { headers: { authorization: proKey } });
    const body = (await within.json()) as { data: unknown[]; meta: { total: number } };
    expect(within.status).toBe(200);
    expectMatchesSpec('listStorefrontProducts', 200, body);
    expect(body.meta.total).toBe(0);
  });
});
