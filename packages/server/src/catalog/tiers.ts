// What each plan may see of a product. The free shape is built field by field rather than by
// deleting Pro fields, so whatever else a store returns can never leak into a free response
// (CatalogProductFree has additionalProperties: false).
import type { CatalogProductFree, CatalogProductPro, Plan } from './model.ts';

export function toFreeProduct(product: CatalogProductPro): CatalogProductFree {
  return {
    id: product.id,
    slug: product.slug,
    sku: product.sku,
    title: product.title,
    brand: product.brand,
    category: product.category,
    color: product.color,
    gender: product.gender,
    description: product.description,
    image: product.image,
    images: product.images,
    currency: product.currency,
    avg_price: product.avg_price,
    min_price: product.min_price,
    max_price: product.max_price,
    trending: product.trending,
    links: product.links,
    variants: product.variants,
  };
}

export function productForPlan(product: CatalogProductPro, plan: Plan): CatalogProductPro | CatalogProductFree {
  switch (plan) {
    case 'pro':
      return product;
    case 'free':
      return toFreeProduct(product);
  }
}
