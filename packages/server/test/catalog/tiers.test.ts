import { describe, expect, it } from 'vitest';
import { productForPlan, toFreeProduct } from '../../src/catalog/tiers.ts';
import { buildCatalogProduct } from '@catalog/contract/testing';
import { schemaFor } from '../support/spec-validator.ts';

describe('toFreeProduct', () => {
  it('drops retail_prices, release_dates and weekly_orders and keeps everything else', () => {
    const pro = buildCatalogProduct();
    const free = toFreeProduct(pro);
    const { retail_prices: _r, release_dates: _d, weekly_orders: _w, ...rest } = pro;
    expect(free).toEqual(rest);
  });

  it('validates against CatalogProductFree, which allows no other field', () => {
    const validate = schemaFor('getProduct', 200);
    const body = { status: 'success', error: '', message: '', query: {}, data: toFreeProduct(buildCatalogProduct()), meta: null };
    expect(validate(body)).toBe(true);
  });

  it('never passes on fields a store adds beyond the contract', () => {
    const pro = { ...buildCatalogProduct(), internal_margin: 0.4 };
    expect(toFreeProduct(pro)).not.toHaveProperty('internal_margin');
  });
});

describe('productForPlan', () => {
  it('gives pro the product unchanged and free the projection', () => {
    const pro = buildCatalogProduct();
    expect(productForPlan(pro, 'pro')).toBe(pro);
    expect(productForPlan(pro, 'free')).not.toHaveProperty('weekly_orders');
  });
});
