// The catalog's resource shapes are the contract's: these aliases name them for domain code.
export type {
  BrandCount,
  CatalogProductFree,
  CatalogProductPro,
  CatalogVariant,
  PriceEvent,
  StorefrontProduct,
  StorefrontProductInput,
  StorefrontSort,
  StorefrontVariant,
} from '@catalog/contract';

export type Plan = 'free' | 'pro';

export interface Page<T> {
  items: T[];
  /** Every match, whether or not a reachable page holds it. */
  total: number;
}
