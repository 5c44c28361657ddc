import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidFilter } from '../../src/catalog/errors.ts';
import type { FilterExpr } from '../../src/catalog/filter/ast.ts';
import { buildStorefrontProduct } from '@catalog/contract/testing';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { FREE_KEY, startApp, type RunningApp } from './harness.ts';

// The parser is tested on its own; here it stands in so the transport's handling is pinned down.
const parseFilter = vi.hoisted(() => vi.fn<(text: string) => FilterExpr>());
vi.mock('../../src/catalog/filter/parse-filter.ts', () => ({ parseFilter }));

describe('listStorefrontProducts', () => {
  let app: RunningApp;

  beforeEach(async () => {
    app = await startApp();
    app.store.storefront.push(...Array.from({ length: 45 }, (_, i) => buildStorefrontProduct({ shop_name: i % 3 === 0 ? 'Kicks Lab' : 'Sneaker Hub' })));
    parseFilter.mockReset();
  });
  afterEach(() => app.close());

  it('returns the first page with the total of every match', async () => {
    const response = await app.get('/v3/storefront/products', { key: FREE_KEY });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: unknown[]; meta: unknown };
    expectMatchesSpec('listStorefrontProducts', 200, body);
    expect(body.data).toHaveLength(20);
    expect(body.meta).toEqual({ total: 45, total_pages: 3 });
  });

  it('pages with page and limit', async () => {
    const response = await app.get('/v3/storefront/products?page=3&limit=20');
    const body = (await response.json()) as { data: { cursor: number }[] };
    expectMatchesSpec('listStorefrontProducts', 200, body);
    expect(body.data).toHaveLength(5);
    expect(app.store.storefrontQueries.at(-1)).toMatchObject({ offset: 40, limit: 20, sort: 'cursor:asc' });
  });

  it('caps total_pages at 50 while total counts every match', async () => {
    app.store.storefront.push(...Array.from({ length: 60 }, () => buildStorefrontProduct()));
    const response = await app.get('/v3/storefront/products?limit=1');
    const body = (await response.json()) as { meta: unknown };
    expectMatchesSpec('listStorefrontProducts', 200, body);
    expect(body.meta).toEqual({ total: 105, total_pages: 50 });
  });

  it('passes shop_name, query and sort to the store', async () => {
    const response = await app.get('/v3/storefront/products?shop_name=kicks%20lab&query=air+jordan&sort=cursor:desc');
    const body = (await response.json()) as { meta: { total: number } };
    expectMatchesSpec('listStorefrontProducts', 200, body);
    expect(body.meta.total).toBe(15);
    expect(app.store.storefrontQueries.at(-1)).toMatchObject({ shopName: 'kicks lab', text: 'air jordan', sort: 'cursor:desc' });
  });

  it('continues after the last cursor with filters=cursor > <cursor>', async () => {
    const last = app.store.storefront[39]!.cursor;
    parseFilter.mockReturnValue({ type: 'compare', field: 'cursor', operator: '>', value: last });
    const response = await app.get(`/v3/storefront/products?filters=${encodeURIComponent(`cursor > ${last}`)}`);
    const body = (await response.json()) as { data: { cursor: number }[]; meta: unknown };
    expectMatchesSpec('listStorefrontProducts', 200, body);
    expect(parseFilter).toHaveBeenCalledWith(`cursor > ${last}`);
    expect(body.data.map((p) => p.cursor)).toEqual(app.store.storefront.slice(40).map((p) => p.cursor));
    expect(body.meta).toEqual({ total: 5, total_pages: 1 });
  });

  it('returns 400 invalid_filter naming the position when the filter does not parse', async () => {
    parseFilter.mockImplementation(() => {
      throw new InvalidFilter(11, 'expected a value after "="');
    });
    const response = await app.get('/v3/storefront/products?filters=shop_name%20%3D');
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; message: string; query: unknown };
    expectMatchesSpec('listStorefrontProducts', 400, body);
    expect(body).toMatchObject({
      error: 'invalid_filter',
      message: 'Invalid filter at position 11: expected a value after "="',
      query: { filters: 'shop_name =' },
    });
  });

  it('refuses page 51 with a message that explains the cursor recipe', async () => {
    const response = await app.get('/v3/storefront/products?page=51');
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; message: string; query: unknown };
    expectMatchesSpec('listStorefrontProducts', 400, body);
    expect(body.error).toBe('page_out_of_range');
    expect(body.message).toContain('50-page limit');
    expect(body.message).toContain('cursor > <cursor of the last item received>');
    expect(body.query).toEqual({ page: '51' });
  });

  it.each([
    ['limit=101', 'Query parameter "limit" must be <= 100, got "101".'],
    ['limit=0', 'Query parameter "limit" must be >= 1, got "0".'],
    ['limit=1.5', 'Query parameter "limit" must be an integer, got "1.5".'],
    ['page=two', 'Query parameter "page" must be an integer, got "two".'],
    ['page=0x10', 'Query parameter "page" must be an integer, got "0x10".'],
    ['limit=1e1', 'Query parameter "limit" must be an integer, got "1e1".'],
    ['limit=%201', 'Query parameter "limit" must be an integer, got " 1".'],
    ['sort=price:asc', 'Query parameter "sort" must be one of cursor:asc, cursor:desc, updated_at:asc, updated_at:desc, published_at:asc, published_at:desc, got "price:asc".'],
    [`query=${'a'.repeat(201)}`, 'Query parameter "query" must be at most 200 characters long'],
    ['shop_name=', 'Query parameter "shop_name" must be at least 1 character long, got "".'],
    ['limit=5&limit=6', 'Query parameter "limit" was given more than once; give it once.'],
    ['colour=red', 'Query parameter "colour" is not accepted by this operation.'],
    ['query=%E0%A4%A', 'The query string has malformed percent-encoding near "query=%E0%A4%A".'],
  ])('returns 400 invalid_request for %s', async (query, message) => {
    const response = await app.get(`/v3/storefront/products?${query}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; message: string };
    expectMatchesSpec('listStorefrontProducts', 400, body);
    expect(body.error).toBe('invalid_request');
    expect(body.message.startsWith(message)).toBe(true);
  });

  it('refuses a filter longer than 2,000 characters before parsing it', async () => {
    const response = await app.get(`/v3/storefront/products?filters=${'a'.repeat(2001)}`);
    expect(response.status).toBe(400);
    expectMatchesSpec('listStorefrontProducts', 400, await response.json());
    expect(parseFilter).not.toHaveBeenCalled();
  });
});
