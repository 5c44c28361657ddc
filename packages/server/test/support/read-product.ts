import type { CatalogProductPro } from '../../src/catalog/model.ts';
import type { CatalogStore } from '../../src/store/catalog-store.ts';

/** The stored product parsed, as a client of the store port would read it. */
export async function readProduct(catalog: CatalogStore, idOrSlug: string): Promise<CatalogProductPro | null> {
  const document = await catalog.getProductDocument(idOrSlug);
  return document === null ? null : (JSON.parse(document) as CatalogProductPro);
}
