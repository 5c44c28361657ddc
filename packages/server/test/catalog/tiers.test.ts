import { describe, expect, it } from 'vitest';
import { projections } from '@catalog/contract';
import { openapiDocument } from '@catalog/contract/documents';
import { productForPlan, toFreeProduct } from '../../src/catalog/tiers.ts';
import { buildCatalogProduct } from '@catalog/contract/testing';
import type { CatalogProductPro } from '../../src/catalog/model.ts';
import { schemaFor } from '../support/spec-validator.ts';

type Schema = { properties: Record<string, unknown>; required: string[]; 'x-withheld': string[] };
const schemas = (openapiDocument['components'] as { schemas: Record<string, Schema> }).schemas;
const free = schemas['CatalogProductFree']!;
const pro = schemas['CatalogProductPro']!;

describe('toFreeProduct', () => {
  it('serves free keys exactly the fields of CatalogProductFree, which are CatalogProductPro minus its x-withheld', () => {
    const withheld = free['x-withheld'];
    expect(Object.keys(free.properties).sort()).toEqual(Object.keys(pro.properties).filter((field) => !withheld.includes(field)).sort());
    expect([...projections.CatalogProductFree.withheld].sort()).toEqual([...withheld].sort());
    // buildCatalogProduct fills every Pro field, optional ones included.
    expect(
      Object.keys(toFreeProduct(buildCatalogProduct())).sort(),
      'buildCatalogProduct (packages/contract/src/testing/builders.ts) must give every CatalogProductPro field a value',
    ).toEqual(Object.keys(free.properties).sort());
  });

  it('keeps every served value as the Pro product has it', () => {
    const product = buildCatalogProduct();
    const served = toFreeProduct(product) as Record<string, unknown>;
    for (const [field, value] of Object.entries(served)) expect(value, field).toBe(product[field as keyof typeof product]);
  });

  it('validates against CatalogProductFree, which allows no other field', () => {
    const validate = schemaFor('getProduct', 200);
    const body = { status: 'success', error: '', message: '', query: {}, data: toFreeProduct(buildCatalogProduct()), meta: null };
    expect(validate(body)).toBe(true);
  });

  it('leaves out a field the product lacks rather than serving it as undefined', () => {
    const { color: _color, ...lacking } = buildCatalogProduct();
    const served = toFreeProduct(lacking as CatalogProductPro);
    expect(Object.keys(served)).not.toContain('color');
    expect(Object.keys(served)).toHaveLength(Object.keys(free.properties).length - 1);
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
    for (const field of projections.CatalogProductFree.withheld) expect(productForPlan(pro, 'free')).not.toHaveProperty(field);
  });
});
