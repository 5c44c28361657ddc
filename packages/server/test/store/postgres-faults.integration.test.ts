// PostgreSQL faults under the API, on a database of the test's own. The database unreachable (a
// proxy cut): 503 with Retry-After at once, 200 again within half a second of its return. One
// catalog table locked (`LOCK TABLE catalog_products` in an open transaction): the look-ups that need the table are answered 503
// within the lock timeout, saying what timed out, with a metric and a log line naming the cause;
// everything that does not need it (variants, GTIN counts, storefront listings from memory) keeps
// answering 200 at once; and the locked table answers again as soon as the lock is released.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { testAppDeps } from '../support/app-deps.ts';
import { createLogger } from '../../src/logger.ts';
import { registry } from '../../src/metrics.ts';
import { IndexedCatalogStore } from '../../src/store/indexed-catalog-store.ts';
import { migratePostgres } from '../../src/store/postgres/migrate-postgres.ts';
import { createPgPool } from '../../src/store/postgres/pg-pool.ts';
import { PostgresCatalogStore } from '../../src/store/postgres/postgres-catalog-store.ts';
import { PostgresKeyStore } from '../../src/store/postgres/postgres-key-store.ts';
import { buildCatalogProduct, buildCatalogVariant, buildStorefrontProductInput } from '@catalog/contract/testing';
import { createTestDatabase, type TestDatabase } from '../support/postgres-test-database.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const LOCK_TIMEOUT_MS = 1_000;
let database: TestDatabase;
let proxy: TcpProxy;
let server: http.Server;
let base: string;
let key: string;
let catalog: IndexedCatalogStore;
const logLines: Record<string, unknown>[] = [];
const BESIDE = ['/v2/variants?sku=FREE-1', '/gtin/count', '/v3/storefront/products', '/v2/variants?gtin=23458'];
const product = buildCatalogProduct({ slug: 'locked-product', variants: [buildCatalogVariant({ sku: 'FREE-1', gtin: '00195866123458' })] });

beforeAll(async () => {
  database = await createTestDatabase();
  const logger = createLogger({ level: 'warn', write: (line) => logLines.push(JSON.parse(line) as Record<string, unknown>) });
  proxy = await startTcpProxy('127.0.0.1', 5432);
  const pool = createPgPool(database.url(proxy.port), logger, { max: 6, lockTimeoutMs: LOCK_TIMEOUT_MS });
  await migratePostgres(pool, logger);
  catalog = new IndexedCatalogStore(new PostgresCatalogStore(pool, { ownsPool: true }));
  const keys = new PostgresKeyStore(pool);
  await catalog.upsertCatalogProducts([product, ...Array.from({ length: 20 }, (_, i) => buildCatalogProduct({ slug: `unread-${i}` }))]);
  await catalog.upsertStorefrontProducts(Array.from({ length: 5 }, () => buildStorefrontProductInput()));
  await catalog.warm?.();
  key = await keys.createKey('pro');
  server = http.createServer(createApp(testAppDeps({ catalog, keys, logger })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await catalog?.close();
  await proxy?.close();
  await database?.drop();
});

async function get(path: string): Promise<{ status: number; ms: number; body: { message?: string }; retryAfter: string | null }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await response.json()) as { message?: string };
  return { status: response.status, ms: performance.now() - started, body, retryAfter: response.headers.get('retry-after') };
}

describe('a locked catalog table', () => {
  it('answers 503 naming the lock for what needs the table, and 200 at once for everything else', async () => {
    // Warm: every operation answered once (connections open, statements prepared).
    for (const path of [...BESIDE, '/v2/products/locked-product']) expect((await get(path)).status).toBe(200);
    const locker = new pg.Client({ connectionString: database.url() });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE catalog_products IN ACCESS EXCLUSIVE MODE');
      // Traffic on the locked table (more look-ups than the pool has connections, of products not
      // read before: a product read before is answered from memory) and beside it.
      const locked = Array.from({ length: 20 }, (_, i) => get(`/v2/products/unread-${i}`));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const beside = await Promise.all(BESIDE.map(get));
      // Answered without waiting for the lock (the locked look-ups wait it out).
      for (const answer of beside) {
        expect(answer.status).toBe(200);
        expect(answer.ms).toBeLessThan(LOCK_TIMEOUT_MS);
      }
      const refused = await Promise.all(locked);
      for (const answer of refused) {
        expect(answer.status).toBe(503);
        expect(answer.retryAfter).not.toBeNull();
        expect(answer.body.message).toMatch(/^The catalog database did not answer in time: .*catalog_products/u);
        expect(answer.ms).toBeLessThan(LOCK_TIMEOUT_MS * 4);
      }
      expect(refused.some((answer) => /waited 1000 ms for a lock \(lock_timeout\)/u.test(answer.body.message ?? ''))).toBe(true);
      expect(logLines.some((line) => line['msg'] === 'database wait refused' && line['cause'] === 'lock_timeout' && line['table'] === 'catalog_products')).toBe(true);
      expect(await registry.getSingleMetricAsString('catalog_db_waits_refused_total')).toMatch(/cause="lock_timeout"\} [1-9]/u);
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }
    expect((await get('/v2/products/unread-0')).status).toBe(200);
  });
});

describe('createPgPool', () => {
  it('lets the queries on a locked table hold at most half the pool, the next waiting its turn until the lock timeout, while other tables are served', async () => {
    const pool = createPgPool(database.url(), createLogger({ level: 'error' }), { max: 4, lockTimeoutMs: 500 });
    const locker = new pg.Client({ connectionString: database.url() });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE catalog_products IN ACCESS EXCLUSIVE MODE');
      const holding = [pool.query('SELECT count(*) FROM catalog_products'), pool.query('SELECT count(*) FROM catalog_products')];
      for (const query of holding) query.catch(() => {});
      const started = performance.now();
      const next = pool.query('SELECT count(*) FROM catalog_products');
      next.catch(() => {});
      // The other half of the pool answers while the locked table's queries still wait.
      expect((await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_variants')).rows[0]?.n).toBeGreaterThan(0);
      expect(performance.now() - started).toBeLessThan(450);
      // Refused once its wait for room passes the lock timeout (or, should room come first, its own wait for the lock).
      await expect(next).rejects.toThrow(/^The catalog database did not answer in time: (no query on catalog_products finished within 500 ms to make room|a query on catalog_products waited 500 ms for a lock)/u);
      expect(performance.now() - started).toBeGreaterThanOrEqual(450);
      expect(performance.now() - started).toBeLessThan(1_500);
      await expect(Promise.all(holding)).rejects.toThrow(/waited 500 ms for a lock/u);
      await locker.query('COMMIT');
      expect((await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_products')).rows[0]?.n).toBeGreaterThan(0);
    } finally {
      await locker.end();
      await pool.end();
    }
  });

  it('serves a burst of look-ups, many times the pool and the share of a table, in turn and refuses none', async () => {
    const pool = createPgPool(database.url(), createLogger({ level: 'error' }), { max: 4, lockTimeoutMs: 2_000 });
    try {
      const onOneTable = Array.from({ length: 30 }, () => pool.query('SELECT count(*)::int AS n, pg_sleep(0.01) FROM catalog_products'));
      const onNone = Array.from({ length: 30 }, () => pool.query('SELECT pg_sleep(0.01)'));
      const answers = await Promise.allSettled([...onOneTable, ...onNone]);
      expect(answers.filter((answer) => answer.status === 'rejected')).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});

describe('an unreachable database', () => {
  it('answers 503 with Retry-After while it is away, and 200 within half a second of its return', async () => {
    expect((await get('/v2/products/unread-1')).status).toBe(200);
    proxy.cut();
    const away = await get('/v2/products/unread-2');
    expect(away.status).toBe(503);
    expect(away.retryAfter).not.toBeNull();
    expect(away.ms).toBeLessThan(5_000);
    proxy.restore();
    const returned = performance.now();
    await expect.poll(async () => (await get('/v2/products/unread-2')).status, { timeout: 2_000, interval: 20 }).toBe(200);
    expect(performance.now() - returned).toBeLessThan(500);
  });
});
