import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isValidGtin, normalizeGtin14 } from '../../src/catalog/gtin.ts';
import {
  catalogProductAt,
  generateCatalogProducts,
  generateStorefrontProducts,
  storefrontCountFor,
} from '../../src/catalog/seed/generate-catalog.ts';
import { buildShops, buildTailBrands, SHOP_COUNT, TAIL_BRAND_COUNT } from '../../src/catalog/seed/long-tail.ts';
import { BRANDS } from '../../src/catalog/seed/vocabulary.ts';
import { describeViolation, importValidators } from '../../src/cli/resource-validators.ts';

const TAG_PREFIXES = ['AUTO', 'COLOR', 'FUNCTIONALITY', 'HEELTYPE', 'REL_DATE', 'SEASON', 'SOLEMATERIAL', 'STYLE', 'TOETYPE'];

describe('seed generator', () => {
  const catalog = [...generateCatalogProducts({ products: 300, seed: 'test' })];
  const storefront = [...generateStorefrontProducts({ products: 300, seed: 'test' })];

  it('is deterministic for a seed and differs between seeds', () => {
    expect(JSON.stringify([...generateCatalogProducts({ products: 20, seed: 'test' })])).toBe(JSON.stringify(catalog.slice(0, 20)));
    expect(JSON.stringify([...generateStorefrontProducts({ products: 20, seed: 'test' })])).toBe(JSON.stringify(storefront.slice(0, 10)));
    expect(catalogProductAt('other', 0).id).not.toBe(catalog[0]!.id);
    expect(catalogProductAt('test', 123)).toStrictEqual(catalog[123]);
  });

  it('produces catalog and storefront products that validate against the contract', () => {
    const validators = importValidators();
    for (const product of catalog) expect(validators.catalog(product) || describeViolation(validators.catalog.errors)).toBe(true);
    for (const product of storefront) expect(validators.storefront(product) || describeViolation(validators.storefront.errors)).toBe(true);
    expect(storefront).toHaveLength(storefrontCountFor(300));
  });

  it('gives unique ids and slugs, valid GTINs of several lengths and about ten variants per product', () => {
    expect(new Set(catalog.map((product) => product.id)).size).toBe(catalog.length);
    expect(new Set(catalog.map((product) => product.slug)).size).toBe(catalog.length);
    const variants = catalog.flatMap((product) => product.variants);
    expect(new Set(variants.map((variant) => variant.id)).size).toBe(variants.length);
    expect(variants.length / catalog.length).toBeGreaterThan(7);
    const lengths = new Set(variants.map((variant) => variant.gtin.length));
    expect([...lengths].sort((a, b) => a - b)).toStrictEqual([8, 12, 13, 14]);
    for (const variant of variants) expect(isValidGtin(normalizeGtin14(variant.gtin)!)).toBe(true);
    expect(variants.some((variant) => variant.gtin.startsWith('00'))).toBe(true);
    expect(new Set(variants.map((variant) => variant.source))).toStrictEqual(new Set(['marketplacea', 'marketplaceb']));
  });

  it('uses real-looking brands, both release date precisions and both retail price sources', () => {
    const brands = new Set(catalog.map((product) => product.brand));
    for (const brand of ['Nike', 'Jordan', 'Adidas', 'New Balance']) expect(brands.has(brand)).toBe(true);
    const dates = catalog.flatMap((product) => product.release_dates);
    expect(dates.some((date) => /^\d{4}$/u.test(date.release_date) && /_\d{4}$/u.test(date.source))).toBe(true);
    expect(dates.some((date) => /^\d{4}-\d{2}-\d{2}$/u.test(date.release_date) && /_\d{4}_\d{2}_\d{2}$/u.test(date.source))).toBe(true);
    const retailSources = new Set(catalog.flatMap((product) => product.retail_prices.map((price) => price.source)));
    expect(retailSources).toStrictEqual(new Set(['srp', 'extracting']));
  });

  it('tags storefront products with barcodes and every documented prefix', () => {
    const tags = storefront.flatMap((product) => product.tags);
    for (const prefix of TAG_PREFIXES) expect(tags.some((tag) => tag.startsWith(`${prefix}_`))).toBe(true);
    expect(tags.some((tag) => /^\d{12,14}$/u.test(tag))).toBe(true);
    expect(new Set(storefront.map((product) => product.shop_name)).size).toBeGreaterThan(3);
  });

  it('has the shape of a real catalog: a long brand tail, hundreds of shops, unicode, IRIs, offsets and up to 200 variants', () => {
    const large = [...generateStorefrontProducts({ products: 6000, seed: 'shape' })];
    const brandCounts = new Map<string, number>();
    for (const product of [...generateCatalogProducts({ products: 3000, seed: 'shape' })]) brandCounts.set(product.brand, (brandCounts.get(product.brand) ?? 0) + 1);
    expect(brandCounts.size).toBeGreaterThan(500);
    expect([...brandCounts.values()].filter((count) => count === 1).length).toBeGreaterThan(200);
    const shops = new Set(large.map((product) => product.shop_name));
    expect(shops.size).toBeGreaterThan(150);
    for (const shop of ['Ünderground', 'Sneakerbox Zürich', '東京スニーカー']) expect(shops.has(shop)).toBe(true);
    expect(large.some((product) => /\P{ASCII}/u.test(product.title) && /\P{ASCII}/u.test(product.link))).toBe(true);
    expect(large.some((product) => product.title === product.title.toUpperCase() && /[A-Z]/u.test(product.title))).toBe(true);
    expect(large.some((product) => /[+-]\d{2}:\d{2}$/u.test(product.product_created_at))).toBe(true);
    const counts = large.map((product) => product.variants.length);
    expect(Math.min(...counts)).toBe(1);
    expect(Math.max(...counts)).toBeGreaterThan(150);
    expect(Math.max(...counts)).toBeLessThanOrEqual(200);
    expect(counts.filter((count) => count <= 8).length / counts.length).toBeGreaterThan(0.8);
    const tags = large.flatMap((product) => product.tags);
    expect(new Set(tags.filter((tag) => tag.startsWith('STYLE_'))).size).toBeGreaterThan(10);
    const validators = importValidators();
    for (const product of large.filter((product) => product.variants.length > 100)) {
      expect(validators.storefront(product) || describeViolation(validators.storefront.errors)).toBe(true);
    }
  });

  // A seed names one catalog for good: benchmarks compare a before and an after on it, and the
  // differential and scale runs rebuild it on every machine. A change to the generator changes these
  // digests; when the catalog is meant to change, update them and say so in the commit.
  it('makes the same catalog for a seed from one version to the next', () => {
    const digest = (products: Iterable<unknown>): string => createHash('sha256').update(JSON.stringify([...products])).digest('hex');
    expect(digest(generateCatalogProducts({ products: 500, seed: 'golden' }))).toBe('a3faf60e4dd3fa929a9c97e68bee765771055114d201dcf6ba27c676cea98fe7');
    expect(digest(generateStorefrontProducts({ products: 3000, seed: 'golden' }))).toBe('c97d2231b952ae397550976cd74e9195261a9ff706b5b8278038b517eae3e9ba');
  });

  it('builds the long tail the same every time: 4,000 brands apart from the headline ones and 300 shops, each name once', () => {
    const brands = buildTailBrands();
    const shops = buildShops();
    expect(brands).toHaveLength(TAIL_BRAND_COUNT);
    expect(new Set([...BRANDS, ...brands].map((brand) => brand.name.toLowerCase())).size).toBe(BRANDS.length + TAIL_BRAND_COUNT);
    expect(shops).toHaveLength(SHOP_COUNT);
    expect(new Set(shops.map((shop) => shop.name.toLowerCase())).size).toBe(SHOP_COUNT);
    const digest = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');
    const skus = (brand: (typeof brands)[number]) => [brand.sku(undefined as never, 7), brand.sku(undefined as never, 123_456)];
    expect(digest(brands.map((brand) => ({ ...brand, sku: skus(brand) })))).toBe('94433382c0ed27784836150fb9ec5779b906324ae80e438fcea9f56bce61fa57');
    expect(digest(shops)).toBe('514321b8a8273d6d0e208821b923adbad2409d32e1a18f03559de485a26b412d');
  });
});
