// Small builders for the data the real server is loaded with. Shapes come from the generated types:
// a catalog product exactly as Pro `getProduct` returns it (with variants), a storefront product as
// `listStorefrontProducts` returns it minus `cursor` (the server assigns cursors). The fixture set is
// chosen to reach every documented behaviour: a GTIN stored with leading zeros and the same GTIN
// unpadded from another source (counted once), several brands, two shops.
import type { CatalogProductPro, CatalogVariant, PriceEvent, StorefrontProduct, StorefrontVariant } from '@catalog/contract';

export type StorefrontProductInput = Omit<StorefrontProduct, 'cursor'>;

export function buildCatalogVariant(overrides: Partial<CatalogVariant> = {}): CatalogVariant {
  return {
    id: '9b2d4c1e-8a7f-4e3d-b5c6-1f2e3d4c5b6a',
    product_id: '3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f',
    sku: 'DD1391-100',
    title: 'Nike Dunk Low Retro White Black Panda',
    description: 'The Dunk Low returns with crisp leather overlays.',
    brand: 'Nike',
    category: 'Sneakers > Low Top',
    color: 'White/Black',
    gender: 'male',
    gtin: '00195866123458',
    size: '10.5',
    link: 'https://go.example.com/marketplacea/dd1391-100?size=10.5',
    image: 'https://cdn.example.com/images/dd1391-100-1.jpg',
    price: 142,
    currency: 'USD',
    tags: ['low-top', 'leather'],
    metadata: { category: 'Sneakers', model: 'Dunk Low' },
    source: 'marketplacea',
    ...overrides,
  };
}

export function buildCatalogProduct(overrides: Partial<CatalogProductPro> = {}): CatalogProductPro {
  const id = overrides.id ?? '3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f';
  const sku = overrides.sku ?? 'DD1391-100';
  return {
    id,
    slug: 'nike-dunk-low-retro-white-black-panda',
    sku,
    title: 'Nike Dunk Low Retro White Black Panda',
    brand: 'Nike',
    category: 'Sneakers > Low Top',
    color: 'White/Black',
    gender: 'male',
    description: 'The Dunk Low returns.<br>Crisp leather overlays.',
    image: 'https://cdn.example.com/images/dd1391-100-1.jpg',
    images: ['https://cdn.example.com/images/dd1391-100-1.jpg'],
    currency: 'USD',
    avg_price: 141.5,
    min_price: 128,
    max_price: 165,
    trending: true,
    release_dates: [{ sku, release_date: '2021-03-10', source: 'marketplacea_2021_03_10' }],
    retail_prices: [{ sku, price: 110, currency: 'USD', source: 'srp' }],
    links: [{ link: 'https://go.example.com/marketplacea/dd1391-100', target: 'marketplacea', min_price: 128 }],
    variants: [buildCatalogVariant({ product_id: id, sku })],
    weekly_orders: 312,
    ...overrides,
  };
}

export function buildStorefrontVariant(overrides: Partial<StorefrontVariant> = {}): StorefrontVariant {
  return {
    id: 'sv_7f3a9c21e4b5',
    parent_id: 'sp_1c9e27b04d',
    product_id: '7741029384721',
    variant_id: '43011887710417',
    title: 'US 10.5 / Men',
    price: 189.99,
    previous_price: 199.99,
    sku: 'DD1391-100-105',
    barcode: '195866123458',
    weight: 1.2,
    currency: 'USD',
    available: true,
    previous_available: false,
    options: { Gender: 'Men', Size: '10.5' },
    updated_at: '2026-11-20T09:14:02Z',
    ...overrides,
  };
}

export function buildStorefrontProduct(overrides: Partial<StorefrontProductInput> = {}): StorefrontProductInput {
  const id = overrides.id ?? 'sp_1c9e27b04d';
  return {
    id,
    product_id: '7741029384721',
    title: 'Nike Dunk Low Retro White Black Panda',
    description: 'The Dunk Low returns with crisp leather overlays.',
    brand: 'Nike',
    product_type: 'Sneakers',
    tags: ['195866123458', 'COLOR_White', 'STYLE_Low', 'SEASON_FW26', 'REL_DATE_2021-03-10'],
    slug: 'nike-dunk-low-retro-white-black-panda',
    link: 'https://sneakerhub.example.com/products/nike-dunk-low-retro-white-black-panda',
    price_min: 119.99,
    price_max: 149.99,
    price_display: 129.99,
    available: true,
    images: ['https://cdn.example.com/images/dd1391-100-1.jpg'],
    shop_name: 'Sneaker Hub',
    shop_url: 'https://sneakerhub.example.com',
    product_created_at: '2025-03-01T10:00:00Z',
    product_published_at: '2025-03-02T08:30:00Z',
    created_at: '2026-01-05T12:00:00.000Z',
    updated_at: '2026-11-20T09:14:02.512Z',
    variants: [buildStorefrontVariant({ parent_id: id })],
    ...overrides,
  };
}

export function buildPriceEvent(overrides: Partial<PriceEvent> = {}): PriceEvent {
  return {
    source: 'marketplacea',
    product_id: '3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f',
    variant_id: '9b2d4c1e-8a7f-4e3d-b5c6-1f2e3d4c5b6a',
    size: '10.5',
    price: 189.99,
    currency: 'USD',
    market: 'US',
    sku: 'DD1391-100',
    timestamp: '2026-11-23T14:03:07.123456789Z',
    ...overrides,
  };
}

const JORDAN_ID = '5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const SAMBA_ID = '7c6b5a49-3827-4161-9e8d-7c6b5a493827';
const AIR_MAX_ID = '8d7c6b5a-4938-4271-8f9e-8d7c6b5a4938';

/** The catalog the server-vs-spec tests load: four products, three brands (Nike twice), two sources. */
export const CATALOG = {
  dunk: buildCatalogProduct({
    variants: [
      buildCatalogVariant(),
      buildCatalogVariant({ id: '1e2d3c4b-5a69-4788-97a6-b5c4d3e2f1a0', size: '11', gtin: '00195866123465', source: 'marketplacea' }),
      // The same GTIN as the first variant, unpadded, from the other source: countGtins counts it once.
      buildCatalogVariant({ id: '2f3e4d5c-6b7a-4899-a8b7-c6d5e4f3a2b1', gtin: '195866123458', source: 'marketplaceb', link: 'https://go.example.com/marketplaceb/dd1391-100?size=10.5' }),
    ],
  }),
  jordan: buildCatalogProduct({
    id: JORDAN_ID,
    slug: 'air-jordan-1-retro-high-og-chicago-lost-and-found',
    sku: 'DZ5485-612',
    title: 'Air Jordan 1 Retro High OG Chicago Lost and Found',
    brand: 'Jordan',
    color: 'Varsity Red/Black/Sail',
    images: null,
    trending: false,
    weekly_orders: 0,
    variants: [buildCatalogVariant({ id: '3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c6d', product_id: JORDAN_ID, sku: 'DZ5485-612', brand: 'Jordan', gtin: '0196153855123', size: '9' })],
  }),
  samba: buildCatalogProduct({
    id: SAMBA_ID,
    slug: 'adidas-samba-og-cloud-white',
    sku: 'B75806',
    title: 'adidas Samba OG Cloud White',
    brand: 'adidas',
    release_dates: [{ sku: 'B75806', release_date: '2018', source: 'marketplaceb_2018' }],
    retail_prices: [],
    variants: [buildCatalogVariant({ id: '4b5c6d7e-8f9a-4b0c-9d1e-2f3a4b5c6d7e', product_id: SAMBA_ID, sku: 'B75806', brand: 'adidas', gtin: '4060512345678', source: 'marketplaceb' })],
  }),
  airMax: buildCatalogProduct({
    id: AIR_MAX_ID,
    slug: 'nike-air-max-90-infrared',
    sku: 'CT1685-100',
    title: 'Nike Air Max 90 Infrared',
    variants: [buildCatalogVariant({ id: '5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f', product_id: AIR_MAX_ID, sku: 'CT1685-100', gtin: '00194276123457' })],
  }),
};

/** Distinct GTINs of CATALOG once each is padded to 14 digits. */
export const UNIQUE_GTINS = 5;

export const STOREFRONT = [
  buildStorefrontProduct(),
  buildStorefrontProduct({ id: 'sp_2d0f38c15e', product_id: '7741029384722', title: 'Air Jordan 1 Retro High OG', brand: 'Jordan', slug: 'air-jordan-1-retro-high-og', price_min: 180, price_max: 220, price_display: 200, variants: [buildStorefrontVariant({ id: 'sv_8a4b0d32f5c6', parent_id: 'sp_2d0f38c15e', sku: 'DZ5485-612-90' })] }),
  buildStorefrontProduct({ id: 'sp_3e1a49d26f', product_id: '99120033', title: 'adidas Samba OG', brand: 'adidas', slug: 'adidas-samba-og', shop_name: 'Kicks Corner', shop_url: 'https://kickscorner.example.com', link: 'https://kickscorner.example.com/p/adidas-samba-og', available: false, tags: ['COLOR_White', 'STYLE_Low'], variants: [] }),
];

export const toNdjson = (items: readonly unknown[]): string => items.map((item) => JSON.stringify(item)).join('\n') + '\n';
