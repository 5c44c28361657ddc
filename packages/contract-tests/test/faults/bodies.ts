// Conforming responses built from the fixtures, one per operation, for the fault tests to break.
import { projections, type ApiOperationId } from '@catalog/contract';
import { CATALOG, DUNK_PRICES, STOREFRONT } from '../support/fixtures.ts';

export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': '0f8c2b9e-5d4a-4c3b-9a1e-7f6d5c4b3a21' };

const v2 = (data: unknown, meta: unknown = null) => ({ status: 'success', error: '', message: '', query: {}, data, meta });

export function proProductBody() {
  return v2(structuredClone(CATALOG.dunk));
}

export function freeProductBody() {
  const free: Record<string, unknown> = structuredClone(CATALOG.dunk);
  for (const field of projections.CatalogProductFree.withheld) delete free[field];
  return v2(free);
}

/** The operations whose 200 body is JSON: every operation of the API listener (the type is the contract's table). */
export type JsonOperationId = ApiOperationId;

/** A 200 body for every JSON operation, keyed by operationId: a new operation needs one here. */
export function okBodies(): Record<JsonOperationId, Record<string, unknown>> {
  return {
    listStorefrontProducts: {
      status: 'success',
      data: STOREFRONT.map((p, i) => ({ ...structuredClone(p), cursor: 17000000000001536 + i })),
      meta: { total: STOREFRONT.length, total_pages: 1 },
    },
    searchVariants: v2(structuredClone(CATALOG.dunk.variants), { total: 3, total_pages: 1 }),
    listTopBrands: v2([{ brand: 'Nike', count: 2 }, { brand: 'Jordan', count: 1 }]),
    getProduct: proProductBody(),
    getProductPrices: v2(structuredClone(DUNK_PRICES), { stream_position: 1_700_000_000_000_003 }),
    countGtins: { count: 5 },
    listMonitors: v2([
      {
        id: 'mon_4b1f0c2e9a7d',
        url: 'https://hooks.example.com/prices',
        filter: `product_id = "${CATALOG.dunk.id}"`,
        min_change_percent: 5,
        min_interval_seconds: 60,
        enabled: true,
        disabled_reason: null,
        created_at: '2026-11-23T14:03:07.123Z',
        delivery: { last_success_at: null, last_failure_at: null, last_failure_reason: null, backlog: 0, oldest_due_at: null },
      },
    ]),
  };
}

export function errorBody(error: string) {
  return { status: 'error', error, message: 'Something about the request.', query: {}, data: null, meta: null };
}
