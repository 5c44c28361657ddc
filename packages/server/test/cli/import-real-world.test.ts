// What real feeds carry must come back exactly as given: IRIs, any Unicode, HTML, timestamps with
// offsets, hundreds of variants, GTINs of every length. Only what is truly invalid is refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gtinCheckDigit } from '../../src/catalog/gtin.ts';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { buildCatalogProduct, buildCatalogVariant, buildStorefrontProductInput, buildStorefrontVariant } from '@catalog/contract/testing';
import { readProduct, readStorefrontPage } from '../support/read-product.ts';
import { runCli } from './run-cli.ts';

const gtinOfLength = (length: number, seed: number): string => {
  const body = String(seed).padStart(length - 1, '7').slice(-(length - 1));
  return `${body}${gtinCheckDigit(body)}`;
};

describe('catalog import', () => {
  let dir: string;
  let db: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-import-real-'));
    db = `sqlite:${join(dir, 'data', 'catalog.db')}`;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps IRIs, unicode, HTML, GTINs of 8 to 14 digits and hundreds of variants exactly as given', async () => {
    const catalogProduct = buildCatalogProduct({
      title: 'Stüssy × Nike Air Force 1 “Fossil” 👟',
      description: '<p>Limited <b>Arc’teryx</b> collab &amp; more</p>',
      image: 'https://cdn.example.com/images/stüssy/東京.jpg',
      images: ['https://cdn.example.com/images/stüssy-1.jpg', 'https://bücher.example/bild.png'],
      variants: [8, 12, 13, 14].map((length, i) =>
        buildCatalogVariant({ gtin: gtinOfLength(length, 4242 + i), link: `https://go.example.com/marketplacea/stüssy?size=${i}`, image: 'https://cdn.example.com/ärmel.jpg' }),
      ),
    });
    const storefrontProduct = buildStorefrontProductInput({
      title: 'Ünderground Réédition 東京 🦄',
      shop_name: 'Sneakerbox Zürich',
      link: 'https://sneakerbox.example.ch/produkte/stüssy-arc’teryx',
      images: ['https://cdn.example.ch/bilder/zürich.jpg'],
      shop_url: 'https://ünderground.example',
      product_created_at: '2025-03-01T11:00:00+01:00',
      product_published_at: '2025-03-02T08:30:00.123-05:00',
    });
    storefrontProduct.variants = Array.from({ length: 300 }, (_, i) => buildStorefrontVariant({ parent_id: storefrontProduct.id, title: `EU ${36 + (i % 14)} / Größe ${i}` }));
    writeFileSync(join(dir, 'catalog.ndjson'), `${JSON.stringify(catalogProduct)}\n`);
    writeFileSync(join(dir, 'storefront.ndjson'), `${JSON.stringify(storefrontProduct)}\n`);

    expect(await runCli(['import', '--db', db, '--kind', 'catalog', join(dir, 'catalog.ndjson')])).toMatchObject({ code: 0, stderr: '' });
    expect(await runCli(['import', '--db', db, '--kind', 'storefront', join(dir, 'storefront.ndjson')])).toMatchObject({ code: 0, stderr: '' });

    const stores = await openCatalogStores(db, silentLogger);
    try {
      expect(await readProduct(stores.catalog, catalogProduct.id)).toStrictEqual(catalogProduct);
      const page = await readStorefrontPage(stores.catalog, { sort: 'cursor:asc', offset: 0, limit: 10 });
      const { cursor: _cursor, created_at: _created, updated_at: _updated, ...served } = page.items[0]!;
      expect(served).toStrictEqual(storefrontProduct);
    } finally {
      await stores.close();
    }
  });

  it.each([
    ['a link without a scheme', { link: 'sneakerbox.example.ch/produkte/x' }],
    ['a link with a space', { link: 'https://sneakerbox.example.ch/produkte/air max' }],
    ['a link with a control character', { link: 'https://sneakerbox.example.ch/\u0007' }],
  ])('refuses %s as FILE:LINE: problem', async (_name, override) => {
    const file = join(dir, 'storefront.ndjson');
    writeFileSync(file, `${JSON.stringify(buildStorefrontProductInput())}\n${JSON.stringify(buildStorefrontProductInput(override))}\n`);
    const result = await runCli(['import', '--db', db, '--kind', 'storefront', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file}:2: /link must match format "iri"`);
    expect(result.stdout).toContain('imported 1 storefront products');
  });
});
