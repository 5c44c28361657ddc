import type { StorefrontProduct } from '../../src/index.ts';

/** First cursor of the fake catalog; 17 digits, and every step of 512 stays exact as a double. */
export const FIRST_CURSOR = 17_000_000_000_000_000;

export function buildStorefrontProduct(index: number, overrides: Partial<StorefrontProduct> = {}): StorefrontProduct {
  return {
    id: `sp_${index}`,
    product_id: String(7_741_029_384_721 + index),
    title: `Product ${index}`,
    description: '',
    brand: 'Nike',
    product_type: 'Sneakers',
    tags: ['COLOR_White'],
    slug: `product-${index}`,
    link: `https://shop.example.com/products/product-${index}`,
    price_min: 100,
    price_max: 120,
    price_display: 110,
    available: true,
    images: [],
    shop_name: index % 2 === 0 ? 'Sneaker Hub' : 'Kicks Corner',
    shop_url: 'https://shop.example.com',
    product_created_at: '2025-03-01T10:00:00Z',
    product_published_at: '2025-03-02T08:30:00Z',
    created_at: '2026-01-05T12:00:00.000Z',
    updated_at: '2026-11-20T09:14:02.512Z',
    cursor: FIRST_CURSOR + index * 512,
    variants: [],
    ...overrides,
  };
}
