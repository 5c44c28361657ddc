// The one set of test builders for every package (`@catalog/contract/testing`): small, valid
// resources per the contract's schemas; override only what a test is about. Each call yields fresh
// ids, slugs, GTINs and cursors, so resources built in one test process never collide; a test that
// asserts exact values passes them as overrides. Tests and benches only: nothing the server runs or
// the published client ships reaches this module.
import { randomUUID } from 'node:crypto';
import { gtinCheckDigit } from '../gtin.ts';
import type {
  CatalogProductPro,
  CatalogVariant,
  PriceChange,
  PriceEvent,
  StorefrontProduct,
  StorefrontProductInput,
  StorefrontVariant,
} from '../index.ts';

let sequence = 0;
function next(): number {
  sequence += 1;
  return sequence;
}

/** A valid 13-digit GTIN (EAN-13) unique within this test process. */
export function buildGtin13(n = next()): string {
  const body = `19${String(n).padStart(10, '0')}`;
  return `${body}${gtinCheckDigit(body)}`;
}

export function buildCatalogVariant(overrides: Partial<CatalogVariant> = {}): CatalogVariant {
  const n = next();
  return {
    id: randomUUID(),
    product_id: randomUUID(),
    sku: 'DD1391-100',
    title: 'Nike Dunk Low Retro White Black Panda',
    description: 'The Dunk Low returns with crisp leather overlays.',
    brand: 'Nike',
    category: 'Sneakers > Low Top',
    color: 'White/Black',
    gender: 'male',
    gtin: `0${buildGtin13(n)}`,
    size: '10.5',
    link: `https://go.example.com/marketplacea/dd1391-100?size=10.5&v=${n}`,
    image: 'https://cdn.example.com/images/dd1391-100-1.jpg',
    price: 142,
    currency: 'USD',
    tags: ['low-top', 'leather'],
    metadata: { category: 'Sneakers', model: 'Dunk Low' },
    source: 'marketplacea',
    ...overrides,
  };
}

/** A catalog product exactly as Pro `getProduct` returns it, with two variants from two sources. */
export function buildCatalogProduct(overrides: Partial<CatalogProductPro> = {}): CatalogProductPro {
  const n = next();
  const id = overrides.id ?? randomUUID();
  const sku = overrides.sku ?? `DD${String(1000 + (n % 9000))}-${String(n % 1000).padStart(3, '0')}`;
  const variants = overrides.variants ?? [
    buildCatalogVariant({ product_id: id, sku, size: '9', source: 'marketplacea' }),
    buildCatalogVariant({ product_id: id, sku, size: '10', source: 'marketplaceb', price: 150.5 }),
  ];
  return {
    id,
    slug: `nike-dunk-low-retro-${n}`,
    sku,
    title: 'Nike Dunk Low Retro White Black Panda',
    brand: 'Nike',
    category: 'Sneakers > Low Top',
    color: 'White/Black',
    gender: 'male',
    description: 'The Dunk Low returns.<br>Crisp leather overlays.',
    image: 'https://cdn.example.com/images/dd1391-100-1.jpg',
    images: null,
    currency: 'USD',
    avg_price: 146.25,
    min_price: 142,
    max_price: 150.5,
    trending: n % 2 === 0,
    release_dates: [
      { sku, release_date: '2021', source: 'marketplacea_2021' },
      { sku, release_date: '2021-03-10', source: 'marketplaceb_2021_03_10' },
    ],
    retail_prices: [
      { sku, price: 110, currency: 'USD', source: 'srp' },
      { sku, price: 115, currency: 'USD', source: 'extracting' },
    ],
    links: [
      { link: `https://go.example.com/marketplacea/${sku.toLowerCase()}`, target: 'marketplacea', min_price: 142 },
    ],
    variants,
    weekly_orders: 312,
    ...overrides,
  };
}

export function buildStorefrontVariant(overrides: Partial<StorefrontVariant> = {}): StorefrontVariant {
  const n = next();
  return {
    id: `sv_${n}`,
    parent_id: 'sp_0',
    product_id: '7741029384721',
    variant_id: String(43011887710000 + n),
    title: 'US 10.5 / Men',
    price: 189.99,
    previous_price: 199.99,
    sku: 'DD1391-100-105',
    barcode: buildGtin13(n).slice(1),
    weight: 1.2,
    currency: 'USD',
    available: true,
    previous_available: false,
    options: { Gender: 'Men', Size: '10.5' },
    updated_at: '2026-11-20T09:14:02Z',
    ...overrides,
  };
}

/** A storefront product as imported: no `cursor`, no `created_at`/`updated_at` unless overridden. */
export function buildStorefrontProductInput(overrides: Partial<StorefrontProductInput> = {}): StorefrontProductInput {
  const n = next();
  const id = overrides.id ?? `sp_${n}`;
  return {
    id,
    product_id: String(7741029380000 + n),
    title: 'Nike Dunk Low Retro White Black Panda',
    description: 'The Dunk Low returns with crisp leather overlays.',
    brand: 'Nike',
    product_type: 'Sneakers',
    tags: ['195866123458', 'COLOR_White', 'STYLE_Low', 'SEASON_FW26', 'REL_DATE_2021-03-10'],
    slug: `nike-dunk-low-retro-white-black-panda-${n}`,
    link: `https://sneakerhub.example.com/products/nike-dunk-low-${n}`,
    price_min: 119.99,
    price_max: 149.99,
    price_display: 129.99,
    available: true,
    images: ['https://cdn.example.com/images/dd1391-100-1.jpg'],
    shop_name: 'Sneaker Hub',
    shop_url: 'https://sneakerhub.example.com',
    product_created_at: '2025-03-01T10:00:00Z',
    product_published_at: '2025-03-02T08:30:00Z',
    variants: [buildStorefrontVariant({ parent_id: id }), buildStorefrontVariant({ parent_id: id, available: false, price: 0 })],
    ...overrides,
  };
}

/** First cursor the builders assign; 17 digits, and every step of 16 stays exact as a double. */
export const FIRST_STOREFRONT_CURSOR = 17_000_000_000_000_000;

/** A storefront product as `listStorefrontProducts` returns it: the input plus the service-assigned fields, cursors increasing per call. */
export function buildStorefrontProduct(overrides: Partial<StorefrontProduct> = {}): StorefrontProduct {
  return {
    ...buildStorefrontProductInput(overrides.id === undefined ? {} : { id: overrides.id }),
    created_at: '2026-01-05T12:00:00.000Z',
    updated_at: '2026-11-20T09:14:02.512Z',
    cursor: FIRST_STOREFRONT_CURSOR + next() * 16,
    ...overrides,
  };
}

/** Topics of both sources in two markets each (`price:<source>:<market>`). */
export const PRICE_TOPICS = ['price:marketplacea:us', 'price:marketplacea:uk', 'price:marketplaceb:us', 'price:marketplaceb:nl'] as const;

export function buildPriceEvent(overrides: Partial<PriceEvent> = {}): PriceEvent {
  return {
    source: 'marketplacea',
    product_id: '3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f',
    variant_id: `variant-${next()}`,
    size: '10.5',
    price: 189.99,
    currency: 'USD',
    market: 'US',
    sku: 'DD1391-100',
    timestamp: '2026-11-23T14:03:07.123456789Z',
    ...overrides,
  };
}

/** A price event on `topic` (`price:<source>:<market>`; the first of PRICE_TOPICS when absent). */
export function buildPriceEventOnTopic(topic: string | undefined): PriceEvent {
  const [, source = 'marketplacea', market = 'us'] = (topic ?? PRICE_TOPICS[0]).split(':');
  return buildPriceEvent({ source: source as PriceEvent['source'], market: market.toUpperCase() });
}

/** One change of a `priceChanged` delivery: a 10% drop from 200 to 180 of a fresh variant. */
export function buildPriceChange(overrides: Partial<PriceChange> = {}): PriceChange {
  const n = next();
  return {
    stream_id: n,
    product_id: '3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f',
    variant_id: `variant-${n}`,
    sku: 'DD1391-100',
    size: '10.5',
    source: 'marketplacea',
    market: 'US',
    currency: 'USD',
    previous_price: 200,
    price: 180,
    change_percent: -10,
    timestamp: '2026-11-23T14:03:07.123456789Z',
    ...overrides,
  };
}
