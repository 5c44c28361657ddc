// The one conformance suite every CatalogStore/KeyStore adapter must pass. Invoke it from an
// adapter's *.test.ts (or *.integration.test.ts) with a factory that opens an empty store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { parseFilter } from '../../src/catalog/filter/parse-filter.ts';
import type { CatalogProductPro, StorefrontProduct, StorefrontProductInput } from '../../src/catalog/model.ts';
import type { CatalogStore, StorefrontQuery } from '../../src/catalog/catalog-store.ts';
import type { IndexedCatalogStore } from '../../src/store/indexed-catalog-store.ts';
import type { KeyStore } from '../../src/store/key-store.ts';
import { buildCatalogProduct, buildCatalogVariant, buildStorefrontProductInput } from '@catalog/contract/testing';
import { readProduct, readStorefrontPage, readVariantPage, textOf } from '../support/read-product.ts';

export interface OpenedStores {
  catalog: CatalogStore;
  keys: KeyStore;
  cleanup(): Promise<void>;
}

function query(overrides: Partial<StorefrontQuery> = {}): StorefrontQuery {
  return { sort: 'cursor:asc', offset: 0, limit: 100, ...overrides };
}

/** The ids a storefront query returns, in order. */
async function ids(catalog: CatalogStore, overrides: Partial<StorefrontQuery> = {}): Promise<string[]> {
  return (await readStorefrontPage(catalog, query(overrides))).items.map((product) => product.id);
}

export function describeCatalogStoreConformance(name: string, open: () => Promise<OpenedStores>): void {
  describe(`CatalogStore conformance: ${name}`, () => {
    let stores: OpenedStores;
    let catalog: CatalogStore;
    beforeEach(async () => {
      stores = await open();
      catalog = stores.catalog;
    });
    afterEach(async () => {
      await stores.cleanup();
    });

    describe('getProduct', () => {
      it('returns every imported field unchanged, in the same key order, by id and by slug', async () => {
        const product = buildCatalogProduct({ images: ['https://cdn.example.com/a.jpg'], description: 'A<br>B "quoted" é, tab\t, line\n, CR\r, back\\slash \\N' });
        await catalog.upsertCatalogProducts([product, buildCatalogProduct()]);
        const byId = await readProduct(catalog, product.id);
        expect(JSON.stringify(byId)).toBe(JSON.stringify(product));
        const bySlug = await readProduct(catalog, product.slug);
        expect(bySlug).toStrictEqual(product);
      });

      it('returns null for an unknown id or slug', async () => {
        await catalog.upsertCatalogProducts([buildCatalogProduct()]);
        expect(await readProduct(catalog, '00000000-0000-4000-8000-000000000000')).toBeNull();
        expect(await readProduct(catalog, 'no-such-slug')).toBeNull();
      });

      it('replaces a product and its variants when the same id is imported again', async () => {
        const first = buildCatalogProduct();
        const oldGtin = first.variants[0]!.gtin;
        expect(await catalog.upsertCatalogProducts([first])).toEqual({ inserted: 1, updated: 0 });
        const second = buildCatalogProduct({
          id: first.id,
          title: 'Renamed',
          variants: [buildCatalogVariant({ product_id: first.id, sku: first.sku })],
        });
        expect(await catalog.upsertCatalogProducts([second])).toEqual({ inserted: 0, updated: 1 });
        expect(await readProduct(catalog, first.id)).toStrictEqual(second);
        expect((await readVariantPage(catalog, { gtin: oldGtin, offset: 0, limit: 10 })).total).toBe(0);
        expect((await readVariantPage(catalog, { sku: first.sku, offset: 0, limit: 10 })).total).toBe(1);
      });
    });

    describe('the text rule on look-ups', () => {
      it('finds a product by its slug in any letter case, non-ASCII included', async () => {
        const product = buildCatalogProduct({ slug: 'Stüssy-8-Ball-Tee' });
        await catalog.upsertCatalogProducts([product]);
        expect((await readProduct(catalog, 'stüssy-8-ball-tee'))?.id).toBe(product.id);
        expect((await readProduct(catalog, 'STÜSSY-8-BALL-TEE'))?.id).toBe(product.id);
        // NFD spelling of the same text (u + combining diaeresis).
        expect((await readProduct(catalog, 'stu\u0308ssy-8-ball-tee'))?.id).toBe(product.id);
      });

      it('gives a slug several products share to the product imported first, and keeps it there on re-import', async () => {
        const first = buildCatalogProduct({ id: 'ffffffff-0000-4000-8000-000000000000', slug: 'Air-Max' });
        const second = buildCatalogProduct({ id: '00000000-0000-4000-8000-000000000000', slug: 'air-max' });
        await catalog.upsertCatalogProducts([first]);
        await catalog.upsertCatalogProducts([second]);
        await catalog.upsertCatalogProducts([first]);
        expect((await readProduct(catalog, 'AIR-MAX'))?.id).toBe(first.id);
        expect((await readProduct(catalog, second.id))?.id).toBe(second.id);
      });

      it('answers look-ups asked at the same moment each with its own product', async () => {
        // An engine may answer concurrent look-ups together; each must still get its own answer.
        const first = buildCatalogProduct({ id: 'ffffffff-0000-4000-8000-000000000001', slug: 'Dunk-Low' });
        const second = buildCatalogProduct({ id: '00000000-0000-4000-8000-000000000001', slug: 'dunk-low' });
        const third = buildCatalogProduct({ slug: second.id });
        await catalog.upsertCatalogProducts([first]);
        await catalog.upsertCatalogProducts([second, third]);
        const keys = ['DUNK-LOW', second.id, third.slug, 'no-such-slug', first.id, 'dunk-low', third.id];
        const answers = await Promise.all(keys.map((key) => readProduct(catalog, key)));
        // A key that is one product's id and another's slug is the id's product.
        expect(answers.map((answer) => answer?.id ?? null)).toStrictEqual([first.id, second.id, second.id, null, first.id, first.id, third.id]);
      });

      it('matches a SKU in any letter case, non-ASCII included', async () => {
        const product = buildCatalogProduct({ variants: [buildCatalogVariant({ sku: 'ÆON-Ünd-01' }), buildCatalogVariant({ sku: 'ÆON-Ünd-01' })] });
        await catalog.upsertCatalogProducts([product]);
        expect((await readVariantPage(catalog, { sku: 'æon-ünd-01', offset: 0, limit: 10 })).total).toBe(2);
        expect((await readVariantPage(catalog, { sku: 'ÆON-ÜND-01', offset: 0, limit: 10 })).total).toBe(2);
      });
    });

    describe('searchVariants', () => {
      it('finds every variant of a SKU exactly and case-insensitively, with an exact total', async () => {
        const product = buildCatalogProduct({ sku: 'CW2288-111' });
        await catalog.upsertCatalogProducts([product, buildCatalogProduct({ sku: 'CW2288-1110' })]);
        const page = await readVariantPage(catalog, { sku: 'cw2288-111', offset: 0, limit: 10 });
        expect(page.total).toBe(2);
        expect(page.items).toStrictEqual(product.variants);
        // Texts as imported, key order included: the API splices them into its responses.
        const texts = await catalog.searchVariantDocuments({ sku: 'CW2288-111', offset: 0, limit: 10 });
        expect(texts.items).toStrictEqual(product.variants.map((variant) => JSON.stringify(variant)));
        expect((await readVariantPage(catalog, { sku: 'CW2288', offset: 0, limit: 10 })).total).toBe(0);
      });

      it('finds a GTIN as stored, without its leading zeros and by a fragment', async () => {
        const target = buildCatalogVariant({ gtin: '00195866123456' });
        const other = buildCatalogVariant({ gtin: '0887791234567' });
        await catalog.upsertCatalogProducts([buildCatalogProduct({ variants: [target, other] })]);
        for (const gtin of ['00195866123456', '195866123456', '5866123']) {
          const page = await readVariantPage(catalog, { gtin, offset: 0, limit: 10 });
          expect(page.total).toBe(1);
          expect(page.items).toStrictEqual([target]);
        }
        expect((await readVariantPage(catalog, { gtin: '99999999', offset: 0, limit: 10 })).total).toBe(0);
      });

      it('pages a GTIN fragment shared by many variants without duplicates or gaps', async () => {
        const variants = Array.from({ length: 7 }, (_, i) => buildCatalogVariant({ gtin: `0042424242${String(i).padStart(4, '0')}` }));
        await catalog.upsertCatalogProducts([
          buildCatalogProduct({ variants: variants.slice(0, 4) }),
          buildCatalogProduct({ variants: variants.slice(4) }),
        ]);
        const seen: string[] = [];
        for (let offset = 0; offset < 10; offset += 3) {
          const page = await readVariantPage(catalog, { gtin: '42424242', offset, limit: 3 });
          expect(page.total).toBe(7);
          seen.push(...page.items.map((variant) => variant.id));
        }
        expect(seen.sort()).toStrictEqual(variants.map((variant) => variant.id).sort());
      });

      it('keeps totals of short GTIN fragments exact as variants are rewritten, dropped and moved', async () => {
        // Short fragments' totals come from stored counts that every write adjusts: a plain count
        // over what is stored now is the truth they must match after each write.
        const gtins = ['0042400001234', '0042400001235', '4242000012340', '0001234000123', '9912342341234'];
        const first = buildCatalogProduct({ variants: gtins.slice(0, 3).map((gtin) => buildCatalogVariant({ gtin })) });
        const second = buildCatalogProduct({ variants: gtins.slice(3).map((gtin) => buildCatalogVariant({ gtin })) });
        const fragments = ['0000', '0001', '1234', '4240', '00012', '12340', '01234', '000123', '4242', '2341', '7777712340', '0042400001234', '00123400'];
        const check = async (products: CatalogProductPro[]): Promise<void> => {
          const stored = products.flatMap((product) => product.variants.map((variant) => variant.gtin));
          for (const fragment of fragments) {
            const page = await readVariantPage(catalog, { gtin: fragment, offset: 0, limit: 2 });
            expect(page.total, fragment).toBe(stored.filter((gtin) => gtin.includes(fragment)).length);
            expect(page.items.length, fragment).toBe(Math.min(2, page.total));
          }
        };
        await catalog.upsertCatalogProducts([first, second]);
        await check([first, second]);
        // A GTIN rewritten, a variant dropped, and one moved from the second product to the first.
        const moved = second.variants[0]!;
        const firstAgain = { ...first, variants: [{ ...first.variants[0]!, gtin: '7777712340000' }, first.variants[2]!, { ...moved, product_id: first.id }] };
        const secondAgain = { ...second, variants: second.variants.slice(1) };
        await catalog.upsertCatalogProducts([firstAgain]);
        await catalog.upsertCatalogProducts([secondAgain]);
        await check([firstAgain, secondAgain]);
        // The same products again, unchanged: nothing moves.
        await catalog.upsertCatalogProducts([firstAgain, secondAgain]);
        await check([firstAgain, secondAgain]);
      });

      it('lists every variant exactly once when paging without a filter', async () => {
        const products = Array.from({ length: 9 }, () => buildCatalogProduct());
        await catalog.upsertCatalogProducts(products);
        const expected = products.flatMap((product) => product.variants.map((variant) => variant.id)).sort();
        const seen: string[] = [];
        for (let offset = 0; offset < expected.length + 5; offset += 5) {
          const page = await readVariantPage(catalog, { offset, limit: 5 });
          expect(page.total).toBe(expected.length);
          seen.push(...page.items.map((variant) => variant.id));
        }
        expect(seen.sort()).toStrictEqual(expected);
      });

      it('combines sku and gtin', async () => {
        const product = buildCatalogProduct({ sku: 'AB1234-001' });
        await catalog.upsertCatalogProducts([product]);
        const gtin = product.variants[1]!.gtin;
        const page = await readVariantPage(catalog, { sku: 'AB1234-001', gtin, offset: 0, limit: 10 });
        expect(page.items).toStrictEqual([product.variants[1]]);
        expect((await readVariantPage(catalog, { sku: 'ZZ0000-000', gtin, offset: 0, limit: 10 })).total).toBe(0);
      });
    });

    describe('topBrands', () => {
      it('orders brands by product count descending, ties by name, up to the limit', async () => {
        const brands = ['Puma', 'Nike', 'Adidas', 'Nike', 'Asics', 'Nike', 'Adidas', 'Vans'];
        await catalog.upsertCatalogProducts(brands.map((brand) => buildCatalogProduct({ brand })));
        expect(await catalog.topBrands(50)).toStrictEqual([
          { brand: 'Nike', count: 3 },
          { brand: 'Adidas', count: 2 },
          { brand: 'Asics', count: 1 },
          { brand: 'Puma', count: 1 },
          { brand: 'Vans', count: 1 },
        ]);
        expect(await catalog.topBrands(2)).toStrictEqual([
          { brand: 'Nike', count: 3 },
          { brand: 'Adidas', count: 2 },
        ]);
      });

      it('reflects products imported after a first call', async () => {
        await catalog.upsertCatalogProducts([buildCatalogProduct({ brand: 'Hoka' })]);
        expect(await catalog.topBrands(50)).toStrictEqual([{ brand: 'Hoka', count: 1 }]);
        await catalog.upsertCatalogProducts([buildCatalogProduct({ brand: 'Hoka' })]);
        expect(await catalog.topBrands(50)).toStrictEqual([{ brand: 'Hoka', count: 2 }]);
      });
    });

    describe('countGtins', () => {
      it('counts distinct GTINs after normalising each to 14 digits', async () => {
        expect(await catalog.countGtins()).toBe(0);
        await catalog.upsertCatalogProducts([
          buildCatalogProduct({
            variants: [
              buildCatalogVariant({ gtin: '00195866123456' }),
              buildCatalogVariant({ gtin: '195866123456' }),
              buildCatalogVariant({ gtin: '0195866123456' }),
            ],
          }),
          buildCatalogProduct({
            variants: [buildCatalogVariant({ gtin: '195866123456' }), buildCatalogVariant({ gtin: '4006381333931' })],
          }),
        ]);
        expect(await catalog.countGtins()).toBe(2);
        await catalog.upsertCatalogProducts([buildCatalogProduct({ variants: [buildCatalogVariant({ gtin: '12345670' })] })]);
        expect(await catalog.countGtins()).toBe(3);
      });

      it('does not count a variant without a GTIN', async () => {
        await catalog.upsertCatalogProducts([buildCatalogProduct({ variants: [buildCatalogVariant({ gtin: '' }), buildCatalogVariant({ gtin: '4006381333931' })] })]);
        expect(await catalog.countGtins()).toBe(1);
      });
    });

    describe('listStorefrontProducts', () => {
      it('reads a page of documents from the engine in the order asked, skipping unknown cursors', async () => {
        const inputs = [buildStorefrontProductInput({ title: 'Crème brûlée – “quoted” 🍮' }), buildStorefrontProductInput(), buildStorefrontProductInput()];
        await catalog.upsertStorefrontProducts(inputs);
        const stored = (await readStorefrontPage(catalog, query())).items;
        const engine = (catalog as IndexedCatalogStore).engine;
        const [first, second, third] = stored.map((product) => product.cursor) as [number, number, number];
        const page = await engine.storefrontDocuments([third, first - 1024, first, second]);
        expect(JSON.parse(textOf(page))).toStrictEqual([stored[2], stored[0], stored[1]]);
        expect(textOf(await engine.storefrontDocuments([]))).toBe('[]');
        expect(textOf(await engine.storefrontDocuments([first - 1024]))).toBe('[]');
      });

      it('answers a page of the same products for another filter from memory, and never one older than the last write', async () => {
        const inputs = Array.from({ length: 3 }, (_, i) => buildStorefrontProductInput({ title: `Runner ${i}`, price_min: 10 + i }));
        await catalog.upsertStorefrontProducts(inputs);
        const engine = (catalog as IndexedCatalogStore).engine;
        let reads = 0;
        const read = engine.storefrontDocuments.bind(engine);
        engine.storefrontDocuments = (cursors) => {
          reads += 1;
          return read(cursors);
        };
        // Three filters, one page of the same three products: read, read and kept, from memory.
        const titles = async (filter: string): Promise<string[]> => (await readStorefrontPage(catalog, query({ filter: parseFilter(filter) }))).items.map((product) => product.title);
        for (const filter of ['price_min >= 10', 'price_min > 5', 'price_min < 100']) expect(await titles(filter)).toStrictEqual(['Runner 0', 'Runner 1', 'Runner 2']);
        expect(reads).toBe(2);
        await catalog.upsertStorefrontProducts([{ ...inputs[1]!, title: 'Renamed' }]);
        expect(await titles('price_min >= 10')).toStrictEqual(['Runner 0', 'Renamed', 'Runner 2']);
        expect(reads).toBe(3);
      });

      it('returns imported fields unchanged and assigns cursor and timestamps', async () => {
        const input = buildStorefrontProductInput();
        const before = Date.now();
        expect(await catalog.upsertStorefrontProducts([input])).toEqual({ inserted: 1, updated: 0 });
        const [stored] = (await readStorefrontPage(catalog, query())).items;
        expect(stored).toBeDefined();
        const product = stored!;
        const { cursor, created_at: createdAt, updated_at: updatedAt, ...rest } = product;
        expect(rest).toStrictEqual(input);
        expect(String(cursor)).toMatch(/^\d{17}$/u);
        expect(Number.isSafeInteger(cursor)).toBe(false);
        expect(JSON.parse(JSON.stringify(cursor))).toBe(cursor);
        expect(BigInt(cursor) % 1024n).toBe(0n);
        for (const stamp of [createdAt, updatedAt]) {
          expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/u);
          expect(Date.parse(stamp)).toBeGreaterThanOrEqual(before - 1000);
        }
        expect(Object.keys(product).indexOf('cursor')).toBeLessThan(Object.keys(product).indexOf('variants'));
      });

      it('keeps created_at and updated_at when the import carries them', async () => {
        const input = buildStorefrontProductInput({ created_at: '2026-01-05T12:00:00.000Z', updated_at: '2026-11-20T09:14:02.512Z' });
        await catalog.upsertStorefrontProducts([input]);
        const [product] = (await readStorefrontPage(catalog, query())).items;
        const { cursor: _cursor, ...rest } = product!;
        expect(rest).toStrictEqual(input);
      });

      it('keeps the cursor and created_at of a product imported again, and updates its fields', async () => {
        const first = buildStorefrontProductInput();
        await catalog.upsertStorefrontProducts([first, buildStorefrontProductInput()]);
        const [original] = (await readStorefrontPage(catalog, query())).items;
        const again = { ...first, title: 'Renamed Dunk', price_min: 99 };
        expect(await catalog.upsertStorefrontProducts([again, buildStorefrontProductInput()])).toEqual({ inserted: 1, updated: 1 });
        const page = await readStorefrontPage(catalog, query());
        expect(page.total).toBe(3);
        const reread = page.items.find((product) => product.id === first.id)!;
        expect(reread.cursor).toBe(original!.cursor);
        expect(reread.created_at).toBe(original!.created_at);
        expect(reread.title).toBe('Renamed Dunk');
        expect(page.items[0]!.id).toBe(first.id);
        expect(await ids(catalog, { text: 'renamed' })).toStrictEqual([first.id]);
        expect(await ids(catalog, { filter: parseFilter('price_min = 99') })).toStrictEqual([first.id]);
      });

      it('assigns strictly increasing cursors in import order', async () => {
        const inputs = Array.from({ length: 5 }, () => buildStorefrontProductInput());
        await catalog.upsertStorefrontProducts(inputs.slice(0, 2));
        await catalog.upsertStorefrontProducts(inputs.slice(2));
        const page = await readStorefrontPage(catalog, query());
        expect(page.items.map((product) => product.id)).toStrictEqual(inputs.map((input) => input.id));
        const cursors = page.items.map((product) => BigInt(product.cursor));
        for (let i = 1; i < cursors.length; i += 1) expect(cursors[i]! > cursors[i - 1]!).toBe(true);
      });

      it('filters by shop name case-insensitively and exactly', async () => {
        const hub = buildStorefrontProductInput({ shop_name: 'Sneaker Hub' });
        const other = buildStorefrontProductInput({ shop_name: 'Sneaker Hub Outlet' });
        await catalog.upsertStorefrontProducts([hub, other]);
        expect(await ids(catalog, { shopName: 'sneaker hub' })).toStrictEqual([hub.id]);
        expect(await ids(catalog, { filter: parseFilter('shop_name = "SNEAKER HUB"') })).toStrictEqual([hub.id]);
        expect(await ids(catalog, { filter: parseFilter('shop_name != "Sneaker Hub"') })).toStrictEqual([other.id]);
      });

      it('applies boolean, number, string, tag, timestamp and logical filters', async () => {
        const a = buildStorefrontProductInput({ brand: 'Nike', available: true, price_min: 90, tags: ['COLOR_Black', 'STYLE_Low'], product_published_at: '2025-01-01T00:00:00Z' });
        const b = buildStorefrontProductInput({ brand: 'Adidas', available: false, price_min: 150, tags: ['COLOR_White'], product_published_at: '2025-06-01T00:00:00Z' });
        const c = buildStorefrontProductInput({ brand: 'Jordan', available: true, price_min: 210, tags: ['color_white', '195866123458'], product_published_at: '2026-01-01T00:00:00Z' });
        await catalog.upsertStorefrontProducts([a, b, c]);
        const cases: [string, string[]][] = [
          ['available = true', [a.id, c.id]],
          ['available = false', [b.id]],
          ['available != true', [b.id]],
          ['price_min >= 150', [b.id, c.id]],
          ['price_min < 150 OR brand = jordan', [a.id, c.id]],
          ['brand IN [nike, "ADIDAS"]', [a.id, b.id]],
          ['brand NOT IN [nike, adidas]', [c.id]],
          ['tags = COLOR_WHITE', [b.id, c.id]],
          ['tags != COLOR_White', [a.id]],
          ['tags IN [STYLE_Low, 195866123458]', [a.id, c.id]],
          ['tags NOT IN [STYLE_Low, 195866123458]', [b.id]],
          ['product_published_at >= 2025-06-01', [b.id, c.id]],
          ['product_published_at < "2025-06-01T00:00:00Z"', [a.id]],
          ['NOT (available = true AND price_min > 100)', [a.id, b.id]],
          ['available = true AND (brand = Nike OR price_min > 200)', [a.id, c.id]],
          [`id = ${a.id}`, [a.id]],
          [`slug = "${b.slug}"`, [b.id]],
        ];
        for (const [filter, expected] of cases) {
          expect({ filter, ids: await ids(catalog, { filter: parseFilter(filter) }) }).toStrictEqual({ filter, ids: expected });
        }
        const page = await readStorefrontPage(catalog, query({ filter: parseFilter('available = true'), limit: 1 }));
        expect(page.total).toBe(2);
        expect(page.items).toHaveLength(1);
      });

      it('finds products whose title, brand, product type or tags contain every word', async () => {
        const dunk = buildStorefrontProductInput({ title: 'Dunk Low Panda', brand: 'Nike', product_type: 'Sneakers', tags: ['COLOR_Black'] });
        const boot = buildStorefrontProductInput({ title: 'Trail Boot', brand: 'Salomon', product_type: 'Boots', tags: ['SEASON_FW26'] });
        await catalog.upsertStorefrontProducts([dunk, boot]);
        expect(await ids(catalog, { text: 'nike panda' })).toStrictEqual([dunk.id]);
        expect(await ids(catalog, { text: 'BOOTS salomon' })).toStrictEqual([boot.id]);
        expect(await ids(catalog, { text: 'season_fw26' })).toStrictEqual([boot.id]);
        expect(await ids(catalog, { text: 'nike boot' })).toStrictEqual([]);
      });

      it('sorts by cursor, updated_at and published_at, ties by cursor', async () => {
        const p1 = buildStorefrontProductInput({ updated_at: '2026-03-01T00:00:00.000Z', product_published_at: '2025-02-01T00:00:00Z' });
        const p2 = buildStorefrontProductInput({ updated_at: '2026-01-01T00:00:00.000Z', product_published_at: '2025-02-01T00:00:00Z' });
        const p3 = buildStorefrontProductInput({ updated_at: '2026-02-01T00:00:00.000Z', product_published_at: '2025-01-01T00:00:00Z' });
        await catalog.upsertStorefrontProducts([p1, p2, p3]);
        expect(await ids(catalog, { sort: 'cursor:asc' })).toStrictEqual([p1.id, p2.id, p3.id]);
        expect(await ids(catalog, { sort: 'cursor:desc' })).toStrictEqual([p3.id, p2.id, p1.id]);
        expect(await ids(catalog, { sort: 'updated_at:asc' })).toStrictEqual([p2.id, p3.id, p1.id]);
        expect(await ids(catalog, { sort: 'updated_at:desc' })).toStrictEqual([p1.id, p3.id, p2.id]);
        expect(await ids(catalog, { sort: 'published_at:asc' })).toStrictEqual([p3.id, p1.id, p2.id]);
        expect(await ids(catalog, { sort: 'published_at:desc' })).toStrictEqual([p2.id, p1.id, p3.id]);
        expect(await ids(catalog, { sort: 'cursor:asc', offset: 1, limit: 1 })).toStrictEqual([p2.id]);
      });

      it('counts exact totals for cursor ranges of every operator', async () => {
        const inputs = Array.from({ length: 30 }, () => buildStorefrontProductInput());
        await catalog.upsertStorefrontProducts(inputs);
        const all = (await readStorefrontPage(catalog, query())).items.map((product) => BigInt(product.cursor));
        const pivot = all[9]!;
        // Probes on, between, below and above the assigned cursors; all exact doubles.
        const probes = [pivot, pivot + 512n, all[0]! - 1024n, all[0]!, all[29]!, all[29]! + 2048n];
        for (const value of probes) {
          const expected: Record<string, number> = {
            '>': all.filter((c) => c > value).length,
            '>=': all.filter((c) => c >= value).length,
            '<': all.filter((c) => c < value).length,
            '<=': all.filter((c) => c <= value).length,
          };
          for (const [operator, count] of Object.entries(expected)) {
            const page = await readStorefrontPage(catalog, query({ filter: parseFilter(`cursor ${operator} ${value}`), limit: 2 }));
            expect({ operator, value: String(value), total: page.total }).toStrictEqual({ operator, value: String(value), total: count });
          }
        }
      });

      it('reaches every one of more than 2,500 products exactly once through 50 pages and cursor filters', async () => {
        const inputs: StorefrontProductInput[] = Array.from({ length: 2_600 }, (_, i) =>
          buildStorefrontProductInput({ shop_name: i % 2 === 0 ? 'Sneaker Hub' : 'Kicks Depot' }),
        );
        for (let i = 0; i < inputs.length; i += 500) await catalog.upsertStorefrontProducts(inputs.slice(i, i + 500));
        const limit = 20;
        const seen: string[] = [];
        let last: StorefrontProduct | undefined;
        for (;;) {
          const filter = last === undefined ? undefined : parseFilter(`cursor > ${JSON.parse(JSON.stringify(last.cursor)) as number}`);
          let received = 0;
          for (let page = 1; page <= 50; page += 1) {
            const result = await readStorefrontPage(catalog, 
              filter === undefined ? query({ offset: (page - 1) * limit, limit }) : query({ filter, offset: (page - 1) * limit, limit }),
            );
            if (page === 1) expect(result.total).toBe(inputs.length - seen.length);
            seen.push(...result.items.map((product) => product.id));
            received += result.items.length;
            last = result.items.at(-1) ?? last;
            if (result.items.length < limit) break;
          }
          if (received === 0) break;
        }
        expect(seen).toHaveLength(inputs.length);
        expect(new Set(seen).size).toBe(inputs.length);
        const hub = await readStorefrontPage(catalog, query({ shopName: 'SNEAKER HUB', filter: parseFilter('available = true'), limit: 1 }));
        expect(hub.total).toBe(1_300);
      });
    });

    describe('sampleVariants', () => {
      it('returns distinct variants spread over the catalog, at most the limit', async () => {
        const products: CatalogProductPro[] = Array.from({ length: 10 }, () => buildCatalogProduct());
        await catalog.upsertCatalogProducts(products);
        const all = new Set(products.flatMap((product) => product.variants.map((variant) => variant.id)));
        const sample = await catalog.sampleVariants(5);
        expect(sample.length).toBeGreaterThan(0);
        expect(sample.length).toBeLessThanOrEqual(5);
        expect(new Set(sample.map((variant) => variant.id)).size).toBe(sample.length);
        for (const variant of sample) expect(all.has(variant.id)).toBe(true);
        expect(await catalog.sampleVariants(100)).toHaveLength(20);
      });
    });

    describe('KeyStore', () => {
      it('returns the plan of a created key and null for an unknown key', async () => {
        const pro = await stores.keys.createKey('pro', 'test');
        const free = await stores.keys.createKey('free');
        expect(pro).not.toBe(free);
        expect(await stores.keys.findPlan(pro)).toBe('pro');
        expect(await stores.keys.findPlan(free)).toBe('free');
        expect(await stores.keys.findPlan(`${pro}x`)).toBeNull();
        expect(await stores.keys.findPlan('')).toBeNull();
      });
    });

    describe('ping', () => {
      it('resolves while open and rejects with ServiceUnavailable once closed', async () => {
        await expect(catalog.ping()).resolves.toBeUndefined();
        await catalog.close();
        await expect(catalog.ping()).rejects.toBeInstanceOf(ServiceUnavailable);
        await expect(readProduct(catalog, 'x')).rejects.toBeInstanceOf(ServiceUnavailable);
      });
    });
  });
}
