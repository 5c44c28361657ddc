// A deterministic synthetic catalog. Product i depends only on (seed, i), so generation streams:
// callers iterate the generators and never hold the catalog in memory, and any product can be
// regenerated alone. Everything produced validates against the contract's schemas (seed.test.ts).
import { gtinCheckDigit } from '../gtin.ts';
import type { CatalogProductPro, CatalogVariant, StorefrontProductInput, StorefrontVariant } from '../model.ts';
import { createRandom, type Random } from './prng.ts';
import { pickBrandProfile, pickShop } from './long-tail.ts';
import {
  COLOURWAYS,
  MATERIALS,
  OTHER_SOURCES,
  SIZES,
  TAG_LABELS,
  VARIANT_SOURCES,
  type BrandProfile,
} from './vocabulary.ts';

export interface SeedOptions {
  /** Number of catalog products; storefront products are half as many (rounded up). */
  products: number;
  seed: string;
}

/** GTIN numbers per product: room for every size × source. */
const GTINS_PER_PRODUCT = 40;
const DAY_MS = 86_400_000;
const EPOCH_2023 = Date.UTC(2023, 0, 1);

export function storefrontCountFor(products: number): number {
  return Math.ceil(products / 2);
}

function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/['’]/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/gu, '');
}

function money(value: number): number {
  return Math.round(value * 100) / 100;
}

interface Identity {
  brand: BrandProfile;
  model: string;
  colourway: (typeof COLOURWAYS)[number];
  sku: string;
  title: string;
  releaseMs: number;
  retail: number;
  material: string;
}

/** What a catalog product and its storefront listings share. */
function identityAt(seed: string, index: number): Identity {
  const random = createRandom(`${seed}:identity:${index}`);
  const brand = pickBrandProfile(random);
  const model = random.pick(brand.models);
  const colourway = random.pick(COLOURWAYS);
  const sku = brand.sku(random, index);
  const releaseMs = Date.UTC(2015, 0, 1) + random.int(0, 4300) * DAY_MS;
  const retail = Math.round(random.int(brand.retail[0], brand.retail[1]) / 5) * 5;
  return {
    brand,
    model,
    colourway,
    sku,
    title: `${brand.name} ${model} ${colourway.name}`,
    releaseMs,
    retail,
    material: random.pick(MATERIALS),
  };
}

/**
 * Spreads sequential numbers over all item references, as real assignments look: an affine map
 * modulo 10^digits with a multiplier coprime to 10 is a bijection, so GTINs stay unique.
 */
function itemReference(n: number, digits: number): string {
  const modulus = 10n ** BigInt(digits);
  return String((BigInt(n) * 387_420_489n + 104_729n) % modulus).padStart(digits, '0');
}

/** A GTIN for number `n` in the brand's numbering, written in one of the lengths sources use. */
function gtinFor(brand: BrandProfile, n: number, random: Random): string {
  if (brand.gtinPrefix.startsWith('1') || brand.gtinPrefix.startsWith('8')) {
    // UPC-A (12 digits); sources store it bare, with one leading zero (EAN-13) or two (GTIN-14).
    const body = `${brand.gtinPrefix}${itemReference(n, 9)}`;
    const upc = `${body}${gtinCheckDigit(body)}`;
    const roll = random.next();
    return roll < 0.4 ? upc : roll < 0.8 ? `00${upc}` : `0${upc}`;
  }
  // EAN-8 for a few tail brands' items: 7 digits of item number keep them unique below 10^7.
  if (brand.weight === 0 && n % 16 === 5) {
    const short = itemReference(n, 7);
    return `${short}${gtinCheckDigit(short)}`;
  }
  const body = `${brand.gtinPrefix}${itemReference(n, 10)}`;
  const ean = `${body}${gtinCheckDigit(body)}`;
  return random.chance(0.6) ? ean : `0${ean}`;
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** The same instant as `ms`, written in local time at `offsetMinutes` from UTC (`+01:00`, `Z` at 0). */
function isoSecondsAt(ms: number, offsetMinutes: number): string {
  if (offsetMinutes === 0) return isoSeconds(ms);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19)}${offset}`;
}

const WIDTHS = ['D', '2E', '4E', 'B'] as const;
/** Variants of a storefront listing: most have a few, some dozens, a few up to 200. */
function storefrontVariantCount(random: Random): number {
  const roll = random.next();
  if (roll < 0.86) return random.int(1, 8);
  if (roll < 0.98) return random.int(9, 40);
  return random.int(41, 200);
}

export function catalogProductAt(seed: string, index: number): CatalogProductPro {
  const identity = identityAt(seed, index);
  const random = createRandom(`${seed}:catalog:${index}`);
  const { brand, sku } = identity;
  const id = random.uuid();
  const skuPath = slugify(sku);
  const image = `https://cdn.example.com/images/${skuPath}-1.jpg`;
  const category = brand.category;
  const gender = random.chance(0.85) ? 'male' : random.pick(['female', 'unisex']);
  const description = `The ${identity.model} in ${identity.colourway.color}.<br>${identity.material[0]!.toUpperCase()}${identity.material.slice(1)} upper, rubber outsole.`;
  const firstSize = random.int(0, SIZES.length - 4);
  const sizeCount = random.int(3, Math.min(10, SIZES.length - firstSize));
  const sources = random.chance(0.75) ? VARIANT_SOURCES : [random.pick(VARIANT_SOURCES)];
  const variants: CatalogVariant[] = [];
  const minBySource = new Map<string, number>();
  for (let s = 0; s < sizeCount; s += 1) {
    const size = SIZES[firstSize + s]!;
    let shared: string | undefined;
    sources.forEach((source, sourceIndex) => {
      // Now and then two sources list the same GTIN in different lengths (counted once).
      const gtin =
        shared !== undefined && random.chance(0.05)
          ? shared.replace(/^0+/u, '')
          : gtinFor(brand, index * GTINS_PER_PRODUCT + s * 2 + sourceIndex, random);
      shared ??= gtin;
      const price = money(identity.retail * (0.75 + random.next() * 1.4));
      minBySource.set(source, Math.min(minBySource.get(source) ?? Infinity, price));
      variants.push({
        id: random.uuid(),
        product_id: id,
        sku,
        title: identity.title,
        description,
        brand: brand.name,
        category,
        color: identity.colourway.color,
        gender,
        gtin,
        size,
        link: `https://go.example.com/${source}/${skuPath}?size=${size}`,
        image,
        price,
        currency: 'USD',
        tags: [slugify(category.split(' > ')[1] ?? category), identity.material],
        metadata: { category: brand.productType, model: identity.model },
        source,
      });
    });
  }
  const prices = variants.map((variant) => variant.price);
  const releaseDate = isoDate(identity.releaseMs);
  const releaseSources = [random.pick(VARIANT_SOURCES), random.pick(OTHER_SOURCES)];
  const links = [...minBySource].map(([source, min]) => ({
    link: `https://go.example.com/${source}/${skuPath}`,
    target: source,
    min_price: min,
  }));
  if (random.chance(0.4)) {
    const other = random.pick(OTHER_SOURCES);
    links.push({ link: `https://go.example.com/${other}/${skuPath}`, target: other, min_price: money(identity.retail * (0.9 + random.next())) });
  }
  return {
    id,
    slug: `${slugify(identity.title)}-${skuPath}`,
    sku,
    title: identity.title,
    brand: brand.name,
    category,
    color: identity.colourway.color,
    gender,
    description,
    image,
    images: random.chance(0.6)
      ? null
      : Array.from({ length: random.int(2, 4) }, (_, i) => `https://cdn.example.com/images/${skuPath}-${i + 1}.jpg`),
    currency: 'USD',
    avg_price: money(prices.reduce((sum, price) => sum + price, 0) / prices.length),
    min_price: Math.min(...prices),
    max_price: Math.max(...prices),
    trending: random.chance(0.08),
    release_dates: [
      { sku, release_date: releaseDate, source: `${releaseSources[0]!}_${releaseDate.replaceAll('-', '_')}` },
      ...(random.chance(0.6) ? [{ sku, release_date: releaseDate.slice(0, 4), source: `${releaseSources[1]!}_${releaseDate.slice(0, 4)}` }] : []),
    ],
    retail_prices: [
      { sku, price: identity.retail, currency: 'USD', source: 'srp' },
      ...(random.chance(0.5) ? [{ sku, price: identity.retail + random.pick([0, 5, 10]), currency: 'USD', source: 'extracting' }] : []),
    ],
    links,
    variants,
    weekly_orders: Math.floor(random.next() ** 3 * 5000),
  };
}

export function storefrontProductAt(seed: string, index: number): StorefrontProductInput {
  const identity = identityAt(seed, index);
  const random = createRandom(`${seed}:storefront:${index}`);
  const shop = pickShop(random);
  const { brand, sku } = identity;
  const id = `sp_${random.hex(10)}`;
  const productId = String(random.int(1_000_000, 9_999_999) * 1_000_000 + random.int(0, 999_999));
  const slug = `${slugify(identity.title)}-${slugify(sku)}`;
  const createdMs = EPOCH_2023 + random.int(0, 1400) * DAY_MS + random.int(0, DAY_MS / 1000 - 1) * 1000;
  const publishedMs = createdMs + random.int(1, 72) * 3_600_000;
  const variantCount = storefrontVariantCount(random);
  const firstSize = variantCount > SIZES.length ? 0 : random.int(0, SIZES.length - variantCount);
  const title = shop.upperCaseTitles ? identity.title.toUpperCase() : identity.title;
  const variants: StorefrontVariant[] = [];
  const barcodes: string[] = [];
  for (let s = 0; s < variantCount; s += 1) {
    // Past one run of sizes, widths multiply the sizes (`10.5 2E`), as wide ranges list them.
    const width = Math.floor(s / SIZES.length);
    const baseSize = SIZES[(firstSize + s) % SIZES.length]!;
    const size = width === 0 ? baseSize : `${baseSize} ${WIDTHS[width % WIDTHS.length]!}${width >= WIDTHS.length ? ` ${Math.floor(width / WIDTHS.length)}` : ''}`;
    const available = random.chance(0.7);
    const listed = money(identity.retail * (0.9 + random.next() * 0.8)) - 0.01;
    const barcode = random.chance(0.9) && s < GTINS_PER_PRODUCT / 2 ? gtinFor(brand, index * GTINS_PER_PRODUCT + s * 2, random).replace(/^0+/u, '') : '';
    if (barcode !== '' && barcodes.length < 2) barcodes.push(barcode);
    variants.push({
      id: `sv_${random.hex(12)}`,
      parent_id: id,
      product_id: productId,
      variant_id: String(40_000_000_000_000 + index * 256 + s),
      title: `US ${size} / Men`,
      price: available ? money(listed) : 0,
      previous_price: money(listed * (1 + random.next() * 0.2)),
      sku: `${sku}-${size.replace('.', '').replaceAll(' ', '-')}`,
      barcode,
      weight: money(0.8 + random.next() * 0.8),
      currency: shop.currency,
      available,
      previous_available: random.chance(0.6),
      options: { Gender: 'Men', Size: size },
      updated_at: isoSecondsAt(publishedMs + random.int(0, 600) * DAY_MS / 10, shop.offsetMinutes),
    });
  }
  const prices = variants.filter((variant) => variant.available).map((variant) => variant.price);
  const priceMin = prices.length === 0 ? identity.retail : Math.min(...prices);
  const priceMax = prices.length === 0 ? identity.retail : Math.max(...prices);
  const tags = [
    ...barcodes,
    `COLOR_${identity.colourway.tag}`,
    `STYLE_${random.pick(TAG_LABELS.STYLE!)}`,
    `SEASON_${random.pick(TAG_LABELS.SEASON!)}`,
    `REL_DATE_${isoDate(identity.releaseMs)}`,
  ];
  for (const prefix of ['AUTO', 'FUNCTIONALITY', 'HEELTYPE', 'SOLEMATERIAL', 'TOETYPE']) {
    if (random.chance(0.5)) tags.push(`${prefix}_${random.pick(TAG_LABELS[prefix]!)}`);
  }
  return {
    id,
    product_id: productId,
    title,
    description: random.chance(0.2) ? '' : `${title}. ${identity.material[0]!.toUpperCase()}${identity.material.slice(1)} upper.`,
    brand: brand.name,
    product_type: brand.productType,
    tags,
    slug,
    link: `${shop.url}/products/${slug}`,
    price_min: priceMin,
    price_max: priceMax,
    price_display: priceMin,
    available: prices.length > 0,
    images: [`https://cdn.example.com/images/${slugify(sku)}-1.jpg`],
    shop_name: shop.name,
    shop_url: shop.url,
    product_created_at: isoSecondsAt(createdMs, shop.offsetMinutes),
    product_published_at: isoSecondsAt(publishedMs, shop.offsetMinutes),
    variants,
  };
}

export function* generateCatalogProducts(options: SeedOptions): Generator<CatalogProductPro> {
  for (let i = 0; i < options.products; i += 1) yield catalogProductAt(options.seed, i);
}

export function* generateStorefrontProducts(options: SeedOptions): Generator<StorefrontProductInput> {
  const count = storefrontCountFor(options.products);
  for (let i = 0; i < count; i += 1) yield storefrontProductAt(options.seed, i);
}
