import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run as runSeed } from '../../src/cli/seed.ts';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { runCli } from './run-cli.ts';
import { readStorefrontPage, readVariantPage } from '../support/read-product.ts';

describe('catalog seed', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-seed-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the same catalog for the same seed and prints a summary', async () => {
    const urls = [`sqlite:${join(dir, 'a.db')}`, `sqlite:${join(dir, 'b.db')}`];
    for (const url of urls) {
      const result = await runCli(['seed', '--db', url, '--products', '40', '--seed', 'same']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^seeded 40 catalog products \(\d+ variants\) and 20 storefront products/u);
    }
    const [a, b] = await Promise.all(urls.map((url) => openCatalogStores(url, silentLogger)));
    try {
      const first = await readVariantPage(a!.catalog, { offset: 0, limit: 1000 });
      const second = await readVariantPage(b!.catalog, { offset: 0, limit: 1000 });
      expect(first.total).toBeGreaterThan(40 * 3 - 1);
      expect(second.items).toStrictEqual(first.items);
      expect(await b!.catalog.topBrands(50)).toStrictEqual(await a!.catalog.topBrands(50));
      expect((await readStorefrontPage(a!.catalog, { sort: 'cursor:asc', offset: 0, limit: 100 })).total).toBe(20);
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
  });

  it('writes NDJSON files that import cleanly with --out', async () => {
    const out = join(dir, 'nd');
    const seeded = await runCli(['seed', '--out', out, '--products', '10']);
    expect(seeded.code).toBe(0);
    expect(readFileSync(join(out, 'catalog.ndjson'), 'utf8').trim().split('\n')).toHaveLength(10);
    const db = `sqlite:${join(dir, 'c.db')}`;
    const imported = await runCli(['import', '--db', db, '--kind', 'catalog', join(out, 'catalog.ndjson')]);
    expect(imported).toMatchObject({ code: 0, stderr: '' });
    const storefront = await runCli(['import', '--db', db, '--kind', 'storefront', join(out, 'storefront.ndjson')]);
    expect(storefront).toMatchObject({ code: 0, stderr: '' });
  });

  it('writes only storefront products with --storefront-products', async () => {
    const url = `sqlite:${join(dir, 'storefront.db')}`;
    const printed = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await runSeed(['--db', url, '--storefront-products', '30'])).toBe(0);
      expect(String(printed.mock.calls.at(-1)?.[0])).toMatch(/^seeded 0 catalog products \(0 variants\) and 30 storefront products/u);
    } finally {
      printed.mockRestore();
    }
    const stores = await openCatalogStores(url, silentLogger);
    try {
      expect((await readStorefrontPage(stores.catalog, { sort: 'cursor:asc', offset: 0, limit: 100 })).total).toBe(30);
      expect((await readVariantPage(stores.catalog, { offset: 0, limit: 10 })).total).toBe(0);
    } finally {
      await stores.close();
    }
  });

  it('refuses --products with --storefront-products', async () => {
    const printed = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await runSeed(['--db', `sqlite:${join(dir, 'y.db')}`, '--products', '10', '--storefront-products', '10'])).toBe(2);
      expect(String(printed.mock.calls[0]?.[0])).toContain('--products and --storefront-products exclude each other');
    } finally {
      printed.mockRestore();
    }
  });

  it('refuses a non-numeric --products', async () => {
    const result = await runCli(['seed', '--db', `sqlite:${join(dir, 'x.db')}`, '--products', 'many']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--products must be an integer from 1 to 100000000, got "many"');
  });
});
