// The catalog's resource shapes are the contract's: these aliases name them for domain code.
import type {
  BrandCount,
  CatalogProductFree,
  CatalogProductPro,
  CatalogVariant,
  PriceEvent,
  StorefrontProduct,
  StorefrontSort,
  StorefrontVariant,
} from '@catalog/contract';

export type { BrandCount, CatalogProductFree, CatalogProductPro, CatalogVariant, PriceEvent, StorefrontProduct, StorefrontSort, StorefrontVariant };

export type Plan = 'free' | 'pro';

/** A storefront product as imported: the service assigns `cursor`, and timestamps where absent. */
export type StorefrontProductInput = Omit<StorefrontProduct, 'cursor' | 'created_at' | 'updated_at'> &
  Partial<Pick<StorefrontProduct, 'created_at' | 'updated_at'>>;

export interface Page<T> {
  items: T[];
  /** Every match, whether or not a reachable page holds it. */
  total: number;
}
