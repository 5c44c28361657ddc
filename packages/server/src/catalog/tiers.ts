// What each plan may see of a product. The contract states the free shape as the Pro shape minus
// the fields it withholds (`x-withheld` on CatalogProductFree, generated into `projections`), and
// `pnpm generate` refuses a Pro field the free schema neither has nor withholds. The free product
// is built from that list of fields rather than by deleting the withheld ones, so whatever else a
// store returns can never leak into a free response (CatalogProductFree has
// additionalProperties: false).
import { projections } from '@catalog/contract';
import type { CatalogProductFree, CatalogProductPro, Plan } from './model.ts';

const FREE_FIELDS = projections.CatalogProductFree.fields;
type Withheld = (typeof projections.CatalogProductFree.withheld)[number];
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
// The generated types agree with the projection, or this line does not compile.
const freeIsProMinusWithheld: Same<Omit<CatalogProductPro, Withheld>, CatalogProductFree> = true;
void freeIsProMinusWithheld;

export function toFreeProduct(product: CatalogProductPro): CatalogProductFree {
  const free: Partial<Record<keyof CatalogProductFree, unknown>> = {};
  for (const field of FREE_FIELDS) {
    // An optional field the product lacks stays absent rather than becoming `undefined`.
    if (product[field] !== undefined) free[field] = product[field];
  }
  return free as CatalogProductFree;
}

export function productForPlan(product: CatalogProductPro, plan: Plan): CatalogProductPro | CatalogProductFree {
  switch (plan) {
    case 'pro':
      return product;
    case 'free':
      return toFreeProduct(product);
  }
}
