// `catalog import` with values real feeds carry: IRIs, any Unicode and emoji, HTML, timestamps
// with offsets, GTINs of every length. Nothing valid is refused; everything reads back as given.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isIri } from '@catalog/contract/ajv';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { buildCatalogProduct, buildCatalogVariant, buildStorefrontProductInput } from '@catalog/contract/testing';
import { readProduct, readStorefrontPage } from '../support/read-product.ts';
import { runCli } from './run-cli.ts';

describe('catalog import of real-world values', () => {
  let dir: string;
  let db: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'import-real-'));
    db = `sqlite:${join(dir, 'catalog.db')}`;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts IRIs, unicode, HTML, offsets and GTINs of 8, 12, 13 and 14 digits, and reads them back unchanged', async () => {
    const catalogProduct = buildCatalogProduct({
      title: 'Stüssy × Nike Air Force 1 “Fossil” 🔥',
      description: 'Leder<br/>Cuir & daim <b>premium</b>',
      image: 'https://cdn.example.com/bilder/stüssy-af1.jpg',
      variants: ['96385074', '195866123456', '4006381333931', '00195866123458'].map((gtin) =>
        buildCatalogVariant({ gtin, link: 'https://go.example.com/marketplacea/arc’teryx-beta?größe=42', image: 'https://例え.jp/画像.jpg' }),
      ),
    });
    const storefrontProduct = buildStorefrontProductInput({
      title: '東京スニーカー限定 — Ünder Boot',
      link: 'https://ünderground.example/products/ünder-boot',
      images: ['https://cdn.example.com/Stüssy/8-ball.jpg'],
      shop_name: 'Ünderground',
      shop_url: 'https://ünderground.example',
      product_published_at: '2025-03-02T10:30:00+02:00',
    });
    writeFileSync(join(dir, 'catalog.ndjson'), `${JSON.stringify(catalogProduct)}\n`);
    writeFileSync(join(dir, 'storefront.ndjson'), `${JSON.stringify(storefrontProduct)}\n`);

    for (const kind of ['catalog', 'storefront'] as const) {
      const result = await runCli(['import', '--db', db, '--kind', kind, join(dir, `${kind}.ndjson`)]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }

    const stores = await openCatalogStores(db, silentLogger);
    try {
      expect(await readProduct(stores.catalog, catalogProduct.id)).toStrictEqual(catalogProduct);
      const page = await readStorefrontPage(stores.catalog, { sort: 'cursor:asc', offset: 0, limit: 10, shopName: 'üNDERGROUND' });
      expect(page.items).toHaveLength(1);
      expect(page.items[0]).toMatchObject({ link: storefrontProduct.link, images: storefrontProduct.images, product_published_at: '2025-03-02T10:30:00+02:00' });
    } finally {
      await stores.close();
    }
  });

  it('refuses what is not an IRI at all, with its line', async () => {
    const product = buildStorefrontProductInput({ link: 'not a url' });
    const file = join(dir, 'storefront.ndjson');
    writeFileSync(file, `${JSON.stringify(product)}\n`);
    const result = await runCli(['import', '--db', db, '--kind', 'storefront', file]);
    expect(result.stderr).toContain(`${file}:1: /link must match format "iri"`);
    expect(result.code).toBe(1);
  });
});

describe('isIri', () => {
  it('takes absolute IRIs with non-ASCII hosts and paths, and refuses relative, spaced or control-laden text', () => {
    for (const iri of ['https://ünderground.example/ü', 'https://例え.jp/画像.jpg', 'http://shop.example/a?b=c#d']) expect(isIri(iri)).toBe(true);
    for (const text of ['/relative/path', 'shop.example/x', 'https://a b.example', 'https://shop.example/\u0000', '']) expect(isIri(text)).toBe(false);
  });
});
