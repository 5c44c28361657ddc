import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { buildCatalogProduct, buildStorefrontProductInput } from '@catalog/contract/testing';
import { runCli } from './run-cli.ts';
import { readProduct, readStorefrontPage } from '../support/read-product.ts';

describe('catalog import', () => {
  let dir: string;
  let db: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-import-'));
    db = `sqlite:${join(dir, 'data', 'catalog.db')}`;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('imports valid lines, reports each bad line with its number, and exits 1', async () => {
    const good = [buildCatalogProduct(), buildCatalogProduct(), buildCatalogProduct()];
    const badGtin = buildCatalogProduct();
    badGtin.variants[0]!.gtin = '12-34';
    const file = join(dir, 'catalog.ndjson');
    writeFileSync(
      file,
      [JSON.stringify(good[0]), '{"id": oops', JSON.stringify(good[1]), JSON.stringify(badGtin), '', JSON.stringify({ ...good[2], extra: true }), JSON.stringify(good[2])].join('\n') + '\n',
    );
    const result = await runCli(['import', '--db', db, '--kind', 'catalog', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file}:2: invalid JSON`);
    expect(result.stderr).toContain(`${file}:4: /variants/0/gtin must match pattern`);
    expect(result.stderr).toContain(`${file}:6: the product has a property the schema does not allow: "extra"`);
    expect(result.stderr).not.toContain(`${file}:7:`);
    expect(result.stdout).toMatch(/imported 3 catalog products \(3 new, 0 updated, 6 variants\).*3 bad line/u);

    const stores = await openCatalogStores(db, silentLogger);
    try {
      for (const product of good) expect(await readProduct(stores.catalog, product.id)).toStrictEqual(product);
      expect(await readProduct(stores.catalog, badGtin.id)).toBeNull();
    } finally {
      await stores.close();
    }
  });

  it('upserts by id when the same file is imported again, and exits 0 when every line is valid', async () => {
    const file = join(dir, 'storefront.ndjson');
    const products = [buildStorefrontProductInput(), buildStorefrontProductInput()];
    writeFileSync(file, products.map((product) => JSON.stringify(product)).join('\n'));
    const first = await runCli(['import', '--db', db, '--kind', 'storefront', file]);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toContain('imported 2 storefront products (2 new, 0 updated, 4 variants)');
    const second = await runCli(['import', '--kind', 'storefront', file], { DATABASE_URL: db });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('(0 new, 2 updated, 4 variants)');
    const stores = await openCatalogStores(db, silentLogger);
    try {
      const page = await readStorefrontPage(stores.catalog, { sort: 'cursor:asc', offset: 0, limit: 10 });
      expect(page.items.map((product) => product.id)).toStrictEqual(products.map((product) => product.id));
    } finally {
      await stores.close();
    }
  });

  it('accepts release date sources with the literal precision suffix and products without weekly_orders', async () => {
    const { weekly_orders: _omitted, ...withoutOrders } = buildCatalogProduct();
    const product = {
      ...withoutOrders,
      release_dates: [
        { sku: withoutOrders.sku, release_date: '2021', source: 'marketplacea_yyyy' },
        { sku: withoutOrders.sku, release_date: '2021-03-10', source: 'marketplaceb_yyyy_mm_dd' },
      ],
    };
    const file = join(dir, 'catalog.ndjson');
    writeFileSync(file, `${JSON.stringify(product)}\n`);
    const result = await runCli(['import', '--db', db, '--kind', 'catalog', file]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const stores = await openCatalogStores(db, silentLogger);
    try {
      expect(JSON.stringify(await readProduct(stores.catalog, product.id))).toBe(JSON.stringify(product));
    } finally {
      await stores.close();
    }
  });

  it('refuses a missing --kind with exit status 2 and a missing file with 1', async () => {
    const usage = await runCli(['import', '--db', db, join(dir, 'x.ndjson')]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--kind must be catalog or storefront');
    const missing = await runCli(['import', '--db', db, '--kind', 'catalog', join(dir, 'missing.ndjson')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('missing.ndjson: cannot read the file');
  });
});
