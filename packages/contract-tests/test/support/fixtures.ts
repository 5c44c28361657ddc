// The data the real server is loaded with, built with the shared builders (`@catalog/contract/testing`)
// and every value the tests assert given explicitly: a catalog product exactly as Pro `getProduct`
// returns it (with variants), a storefront product as imported (the server assigns cursors). The
// fixture set is chosen to reach every documented behaviour: a GTIN stored with leading zeros and the
// same GTIN unpadded from another source (counted once), several brands, two shops.
import type { CatalogProductPro, PriceEvent } from '@catalog/contract';
import { buildCatalogProduct, buildCatalogVariant, buildPriceEvent, buildStorefrontProductInput, buildStorefrontVariant } from '@catalog/contract/testing';

const DUNK_ID = '3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f';
const DUNK_SKU = 'DD1391-100';
/** The first Dunk variant: the price events' variant too. */
export const DUNK_VARIANT_ID = '9b2d4c1e-8a7f-4e3d-b5c6-1f2e3d4c5b6a';
const DUNK_LINK = 'https://go.example.com/marketplacea/dd1391-100?size=10.5';
const IMAGE = 'https://cdn.example.com/images/dd1391-100-1.jpg';

/** What every catalog fixture fixes beyond its own id, SKU and variants: prices, one release date, one retail price and one link. */
const catalogFixture = (sku: string) =>
  ({
    images: [IMAGE],
    avg_price: 141.5,
    min_price: 128,
    max_price: 165,
    trending: true,
    release_dates: [{ sku, release_date: '2021-03-10', source: 'marketplacea_2021_03_10' }],
    retail_prices: [{ sku, price: 110, currency: 'USD', source: 'srp' }],
    links: [{ link: 'https://go.example.com/marketplacea/dd1391-100', target: 'marketplacea', min_price: 128 }],
  }) satisfies Partial<CatalogProductPro>;

/** Timestamps imported with the storefront fixtures, so they come back exactly as given. */
export const IMPORTED_AT = { created_at: '2026-01-05T12:00:00.000Z', updated_at: '2026-11-20T09:14:02.512Z' };

/** What every storefront fixture fixes beyond its own id, product id, slug and variants. */
const storefrontFixture = { link: 'https://sneakerhub.example.com/products/nike-dunk-low-retro-white-black-panda', ...IMPORTED_AT };

const JORDAN_ID = '5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const SAMBA_ID = '7c6b5a49-3827-4161-9e8d-7c6b5a493827';
const AIR_MAX_ID = '8d7c6b5a-4938-4271-8f9e-8d7c6b5a4938';

/** The catalog the server-vs-spec tests load: four products, three brands (Nike twice), two sources. */
export const CATALOG = {
  dunk: buildCatalogProduct({
    ...catalogFixture(DUNK_SKU),
    id: DUNK_ID,
    slug: 'nike-dunk-low-retro-white-black-panda',
    sku: DUNK_SKU,
    variants: [
      buildCatalogVariant({ id: DUNK_VARIANT_ID, product_id: DUNK_ID, gtin: '00195866123458', link: DUNK_LINK }),
      buildCatalogVariant({ id: '1e2d3c4b-5a69-4788-97a6-b5c4d3e2f1a0', product_id: DUNK_ID, size: '11', gtin: '00195866123465', link: DUNK_LINK, source: 'marketplacea' }),
      // The same GTIN as the first variant, unpadded, from the other source: countGtins counts it once.
      buildCatalogVariant({ id: '2f3e4d5c-6b7a-4899-a8b7-c6d5e4f3a2b1', product_id: DUNK_ID, gtin: '195866123458', source: 'marketplaceb', link: 'https://go.example.com/marketplaceb/dd1391-100?size=10.5' }),
    ],
  }),
  jordan: buildCatalogProduct({
    ...catalogFixture('DZ5485-612'),
    id: JORDAN_ID,
    slug: 'air-jordan-1-retro-high-og-chicago-lost-and-found',
    sku: 'DZ5485-612',
    title: 'Air Jordan 1 Retro High OG Chicago Lost and Found',
    brand: 'Jordan',
    color: 'Varsity Red/Black/Sail',
    images: null,
    trending: false,
    weekly_orders: 0,
    variants: [buildCatalogVariant({ id: '3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c6d', product_id: JORDAN_ID, sku: 'DZ5485-612', brand: 'Jordan', gtin: '0196153855123', size: '9', link: DUNK_LINK })],
  }),
  samba: buildCatalogProduct({
    ...catalogFixture('B75806'),
    id: SAMBA_ID,
    slug: 'adidas-samba-og-cloud-white',
    sku: 'B75806',
    title: 'adidas Samba OG Cloud White',
    brand: 'adidas',
    release_dates: [{ sku: 'B75806', release_date: '2018', source: 'marketplaceb_2018' }],
    retail_prices: [],
    variants: [buildCatalogVariant({ id: '4b5c6d7e-8f9a-4b0c-9d1e-2f3a4b5c6d7e', product_id: SAMBA_ID, sku: 'B75806', brand: 'adidas', gtin: '4060512345678', link: DUNK_LINK, source: 'marketplaceb' })],
  }),
  airMax: buildCatalogProduct({
    ...catalogFixture('CT1685-100'),
    id: AIR_MAX_ID,
    slug: 'nike-air-max-90-infrared',
    sku: 'CT1685-100',
    title: 'Nike Air Max 90 Infrared',
    variants: [buildCatalogVariant({ id: '5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f', product_id: AIR_MAX_ID, sku: 'CT1685-100', gtin: '00194276123457', link: DUNK_LINK })],
  }),
};

/** Price events of CATALOG.dunk as the server-vs-spec tests publish them: two of one variant, source and market (the later one is the latest), one of another market. */
export const DUNK_PRICES: PriceEvent[] = [
  buildPriceEvent({ product_id: DUNK_ID, variant_id: DUNK_VARIANT_ID, source: 'marketplacea', market: 'US', price: 120 }),
  buildPriceEvent({ product_id: DUNK_ID, variant_id: DUNK_VARIANT_ID, source: 'marketplacea', market: 'UK', currency: 'GBP', price: 95 }),
  buildPriceEvent({ product_id: DUNK_ID, variant_id: DUNK_VARIANT_ID, source: 'marketplacea', market: 'US', price: 118.5 }),
];

/** Distinct GTINs of CATALOG once each is padded to 14 digits. */
export const UNIQUE_GTINS = 5;

export const STOREFRONT = [
  buildStorefrontProductInput({
    ...storefrontFixture,
    id: 'sp_1c9e27b04d',
    product_id: '7741029384721',
    slug: 'nike-dunk-low-retro-white-black-panda',
    variants: [buildStorefrontVariant({ id: 'sv_7f3a9c21e4b5', parent_id: 'sp_1c9e27b04d', variant_id: '43011887710417', barcode: '195866123458' })],
  }),
  buildStorefrontProductInput({ ...storefrontFixture, id: 'sp_2d0f38c15e', product_id: '7741029384722', title: 'Air Jordan 1 Retro High OG', brand: 'Jordan', slug: 'air-jordan-1-retro-high-og', price_min: 180, price_max: 220, price_display: 200, variants: [buildStorefrontVariant({ id: 'sv_8a4b0d32f5c6', parent_id: 'sp_2d0f38c15e', variant_id: '43011887710417', barcode: '195866123458', sku: 'DZ5485-612-90' })] }),
  buildStorefrontProductInput({ ...storefrontFixture, id: 'sp_3e1a49d26f', product_id: '99120033', title: 'adidas Samba OG', brand: 'adidas', slug: 'adidas-samba-og', shop_name: 'Kicks Corner', shop_url: 'https://kickscorner.example.com', link: 'https://kickscorner.example.com/p/adidas-samba-og', available: false, tags: ['COLOR_White', 'STYLE_Low'], variants: [] }),
];

export const toNdjson = (items: readonly unknown[]): string => items.map((item) => JSON.stringify(item)).join('\n') + '\n';
