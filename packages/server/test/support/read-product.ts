import type { CatalogProductPro, CatalogVariant, Page, StorefrontProduct } from '../../src/catalog/model.ts';
import type { CatalogStore, StorefrontQuery, VariantQuery } from '../../src/catalog/catalog-store.ts';

/** The stored product parsed, as a client of the store port would read it. */
export async function readProduct(catalog: CatalogStore, idOrSlug: string): Promise<CatalogProductPro | null> {
  const document = await catalog.getProductDocument(idOrSlug);
  return document === null ? null : (JSON.parse(document) as CatalogProductPro);
}

/** A storefront page parsed, as a client of the store port would read it. */
/** A variant page parsed, as a client of the store port would read it. */
export async function readVariantPage(catalog: CatalogStore, query: VariantQuery): Promise<Page<CatalogVariant>> {
  const page = await catalog.searchVariantDocuments(query);
  return { items: page.items.map((text) => JSON.parse(text) as CatalogVariant), total: page.total };
}

export async function readStorefrontPage(catalog: CatalogStore, query: StorefrontQuery): Promise<Page<StorefrontProduct>> {
  const page = await catalog.listStorefrontDocuments(query);
  return { items: JSON.parse(textOf(page.items)) as StorefrontProduct[], total: page.total };
}

/** Stored JSON as text, whether the store handed it over as a string or as UTF-8 bytes. */
export function textOf(json: string | Uint8Array): string {
  return typeof json === 'string' ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8');
}
