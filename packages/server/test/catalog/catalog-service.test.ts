import { beforeEach, describe, expect, it, vi } from 'vitest';
import { CatalogService } from '../../src/catalog/catalog-service.ts';
import { InvalidFilter, InvalidRequest, PageOutOfRange, ProductNotFound } from '../../src/catalog/errors.ts';
import type { FilterExpr } from '../../src/catalog/filter/ast.ts';
import { FakeCatalogStore } from '../support/fake-catalog-store.ts';
import { textOf } from '../support/read-product.ts';
import { buildCatalogProduct, buildCatalogVariant, buildStorefrontProduct } from '@catalog/contract/testing';

const parseFilter = vi.hoisted(() => vi.fn<(text: string) => FilterExpr>());
vi.mock('../../src/catalog/filter/parse-filter.ts', () => ({ parseFilter }));

describe('CatalogService', () => {
  let store: FakeCatalogStore;
  let service: CatalogService;

  beforeEach(() => {
    parseFilter.mockReset();
    store = new FakeCatalogStore({ storefront: Array.from({ length: 101 }, () => buildStorefrontProduct()) });
    service = new CatalogService(store);
  });

  describe('listStorefrontProducts', () => {
    it('turns page and limit into an offset and counts pages from the total', async () => {
      const result = await service.listStorefrontProducts({ sort: 'cursor:asc', page: 2, limit: 50 });
      // Strict: a text, shop or filter the caller did not give is absent, not undefined.
      expect(store.storefrontQueries.at(-1)).toStrictEqual({ sort: 'cursor:asc', offset: 50, limit: 50 });
      expect(result).toMatchObject({ total: 101, totalPages: 3 });
      expect(JSON.parse(textOf(result.items))).toHaveLength(50);
    });

    it('caps total_pages at 50', async () => {
      const result = await service.listStorefrontProducts({ sort: 'cursor:asc', page: 1, limit: 2 });
      expect(result).toMatchObject({ total: 101, totalPages: 50 });
    });

    it('reports zero pages for no match', async () => {
      store.storefront = [];
      const result = await service.listStorefrontProducts({ sort: 'cursor:asc', page: 1, limit: 20 });
      expect(result).toMatchObject({ total: 0, totalPages: 0 });
      expect(result.items).toBe('[]');
    });

    it('refuses a page beyond 50 with the cursor recipe', async () => {
      const refusal = service.listStorefrontProducts({ sort: 'cursor:asc', page: 51, limit: 20 });
      await expect(refusal).rejects.toBeInstanceOf(PageOutOfRange);
      await expect(refusal).rejects.toThrow('cursor > <cursor of the last item received>');
    });

    it('passes text, shop and the parsed filter to the store', async () => {
      const filter: FilterExpr = { type: 'compare', field: 'available', operator: '=', value: true };
      parseFilter.mockReturnValue(filter);
      await service.listStorefrontProducts({ sort: 'updated_at:desc', page: 1, limit: 20, query: 'dunk', shopName: 'Sneaker Hub', filters: 'available = true' });
      expect(parseFilter).toHaveBeenCalledWith('available = true');
      expect(store.storefrontQueries.at(-1)).toEqual({ sort: 'updated_at:desc', offset: 0, limit: 20, text: 'dunk', shopName: 'Sneaker Hub', filter });
    });

    it('lets the parser refuse a filter before the store is asked', async () => {
      parseFilter.mockImplementation(() => {
        throw new InvalidFilter(3, 'unknown field "colour"');
      });
      await expect(service.listStorefrontProducts({ sort: 'cursor:asc', page: 1, limit: 20, filters: 'colour = red' })).rejects.toBeInstanceOf(InvalidFilter);
      expect(store.storefrontQueries).toEqual([]);
    });

    it('refuses a limit above 100', async () => {
      await expect(service.listStorefrontProducts({ sort: 'cursor:asc', page: 1, limit: 101 })).rejects.toBeInstanceOf(InvalidRequest);
    });

    it('serves page 50 and a limit of 100, the largest allowed', async () => {
      await expect(service.listStorefrontProducts({ sort: 'cursor:asc', page: 50, limit: 2 })).resolves.toMatchObject({ total: 101 });
      await expect(service.listStorefrontProducts({ sort: 'cursor:asc', page: 1, limit: 100 })).resolves.toMatchObject({ total: 101 });
    });

    it.each([
      [{ page: 0, limit: 20 }, 'Query parameter "page" must be an integer >= 1, got 0.'],
      [{ page: 1.5, limit: 20 }, 'Query parameter "page" must be an integer >= 1, got 1.5.'],
      [{ page: 1, limit: 0 }, 'Query parameter "limit" must be an integer from 1 to 100, got 0.'],
      [{ page: 1, limit: 2.5 }, 'Query parameter "limit" must be an integer from 1 to 100, got 2.5.'],
      [{ page: 1, limit: 101 }, 'Query parameter "limit" must be an integer from 1 to 100, got 101.'],
    ])('refuses paging %j, saying which parameter and why', async (paging, message) => {
      await expect(service.listStorefrontProducts({ sort: 'cursor:asc', ...paging })).rejects.toThrow(new InvalidRequest(message));
      await expect(service.searchVariants(paging)).rejects.toThrow(new InvalidRequest(message));
      expect(store.storefrontQueries).toEqual([]);
    });
  });

  describe('searchVariants', () => {
    beforeEach(() => {
      store.catalog = [buildCatalogProduct({ variants: Array.from({ length: 7 }, () => buildCatalogVariant()) })];
    });

    it('pages without the 50-page cap', async () => {
      const result = await service.searchVariants({ page: 3, limit: 3 });
      expect(store.variantQueries.at(-1)).toStrictEqual({ offset: 6, limit: 3 });
      expect(result).toMatchObject({ total: 7, totalPages: 3 });
      expect(result.items).toHaveLength(1);
      await expect(service.searchVariants({ page: 60, limit: 1 })).resolves.toMatchObject({ items: [], totalPages: 7 });
    });

    it('passes a SKU and a GTIN fragment of 4 to 14 digits to the store', async () => {
      const wanted = buildCatalogVariant({ sku: 'AQ1-777' });
      store.catalog[0]!.variants.push(wanted);
      const variants = store.catalog[0]!.variants;
      await expect(service.searchVariants({ page: 1, limit: 20, sku: 'aq1-777' })).resolves.toMatchObject({ total: 1, totalPages: 1 });
      expect(store.variantQueries.at(-1)).toStrictEqual({ offset: 0, limit: 20, sku: 'aq1-777' });
      for (const gtin of [wanted.gtin.slice(-4), wanted.gtin]) {
        const holding = variants.filter((variant) => variant.gtin.includes(gtin)).length;
        await expect(service.searchVariants({ page: 1, limit: 20, gtin })).resolves.toMatchObject({ total: holding });
        expect(store.variantQueries.at(-1)).toStrictEqual({ offset: 0, limit: 20, gtin });
      }
    });

    it.each(['123', 'abcd', '123456789012345'])('refuses the gtin fragment %s', async (gtin) => {
      await expect(service.searchVariants({ page: 1, limit: 20, gtin })).rejects.toThrow(new InvalidRequest(`Query parameter "gtin" must be 4 to 14 digits, got "${gtin}".`));
    });
  });

  describe('getProduct', () => {
    it('projects the product for the free plan', async () => {
      const product = buildCatalogProduct({ slug: 'dunk' });
      store.catalog = [product];
      expect(await service.getProduct('dunk', 'pro')).toEqual({ plan: 'pro', document: JSON.stringify(product) });
      const free = await service.getProduct('dunk', 'free');
      expect(free.plan).toBe('free');
      expect(free.plan === 'free' && free.product).not.toHaveProperty('retail_prices');
    });

    it('throws ProductNotFound for an unknown id', async () => {
      await expect(service.getProduct('nope', 'pro')).rejects.toBeInstanceOf(ProductNotFound);
    });
  });

  describe('productIdOf', () => {
    it('finds the id of the product an id or a slug names', async () => {
      const product = buildCatalogProduct({ slug: 'dunk-low' });
      store.catalog = [buildCatalogProduct(), product];
      expect(await service.productIdOf('dunk-low')).toBe(product.id);
      expect(await service.productIdOf(product.id)).toBe(product.id);
    });

    it('throws ProductNotFound, naming what was asked, for an unknown id or slug', async () => {
      store.catalog = [buildCatalogProduct()];
      await expect(service.productIdOf('nope')).rejects.toThrow(new ProductNotFound('nope'));
    });
  });

  describe('countGtins', () => {
    it('answers the store\'s count of distinct GTINs', async () => {
      store.catalog = [buildCatalogProduct({ variants: Array.from({ length: 3 }, () => buildCatalogVariant()) })];
      expect(await service.countGtins()).toBe(3);
    });
  });

  describe('listTopBrands', () => {
    it('asks the store for 50 brands', async () => {
      store.brands = Array.from({ length: 70 }, (_, i) => ({ brand: `B${i}`, count: 1 }));
      expect(await service.listTopBrands()).toHaveLength(50);
    });
  });
});
