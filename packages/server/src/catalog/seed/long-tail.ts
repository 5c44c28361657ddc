// The long tail of a real catalog: thousands of brands and hundreds of shops beyond the headline
// vocabulary, picked with Zipf-like (1/rank) frequencies. Names are built from syllables with a share
// of non-ASCII letters, apostrophes and CJK, so text matching, slugs and IRIs meet real variety.
// Every list is a pure function of its index (no seed), built once per process, so it is the same
// for every seed and generation stays O(1) per pick; the builders are exported so that tests (and
// mutation testing, which switches code within one process) reach them afresh.
import type { Random } from './prng.ts';
import { BRANDS, type BrandProfile } from './vocabulary.ts';

export const TAIL_BRAND_COUNT = 4000;
export const SHOP_COUNT = 300;
/** Share of products from the headline brands; the rest follow the tail's 1/rank curve. */
const HEAD_SHARE = 0.55;

const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'ven', 'to', 'sa', 'nor', 'el', 'ti', 'bo', 'ru', 'zen', 'qu', 'ha', 'vik', 'do', 'ne', 'xa', 'li'];
const ACCENTED = ['ü', 'é', 'ø', 'å', 'ñ', 'ç', 'ß', 'ł', 'ö', 'è'];
const CJK = ['東京', '大阪', '靴', '走', '風', '山', '雪', '空'];
const PRODUCT_KINDS = [
  { productType: 'Sneakers', category: 'Sneakers > Low Top', models: ['Runner', 'Court Low', 'Trainer', 'Classic'] },
  { productType: 'Boots', category: 'Boots > Ankle', models: ['Chelsea', 'Hiker', 'Work Boot'] },
  { productType: 'Sandals', category: 'Sandals > Slides', models: ['Slide', 'Strap Sandal'] },
  { productType: 'Apparel', category: 'Apparel > Tops', models: ['Hoodie', 'Tee', 'Track Jacket'] },
] as const;

/** A deterministic name-like word for `n`, sometimes with a non-ASCII letter. */
function wordFor(n: number, salt: number): string {
  let word = '';
  let k = n + salt * 7919;
  for (let i = 0; i < 2 + (k % 2); i += 1) {
    word += SYLLABLES[k % SYLLABLES.length]!;
    k = Math.floor(k / SYLLABLES.length) + 13;
  }
  if ((n + salt) % 7 === 0) word = word.replace(/[aeiou]/u, ACCENTED[n % ACCENTED.length]!);
  return word[0]!.toUpperCase() + word.slice(1);
}

function tailBrand(rank: number): BrandProfile {
  const kind = PRODUCT_KINDS[rank % PRODUCT_KINDS.length]!;
  let name = rank % 23 === 0 ? `${CJK[rank % CJK.length]!}${CJK[(rank >> 3) % CJK.length]!}` : wordFor(rank, 1);
  if (rank % 11 === 0) name = `${name}’${wordFor(rank, 2).toLowerCase()}`;
  else if (rank % 5 === 0) name = `${name} ${wordFor(rank, 3)}`;
  if (rank >= 400) name = `${name} ${rank}`;
  const code = (rank % 900) + 100;
  return {
    name,
    weight: 0,
    productType: kind.productType,
    category: kind.category,
    models: kind.models,
    sku: (_random, n) => `T${code}-${String(n % 100_000).padStart(5, '0')}`,
    gtinPrefix: String(40 + (rank % 50)),
    retail: [40 + (rank % 60), 120 + (rank % 200)],
  };
}

let tail: readonly BrandProfile[] | undefined;
/** The tail brands (buildTailBrands), built once per process. */
export function tailBrands(): readonly BrandProfile[] {
  return (tail ??= buildTailBrands());
}

/** The tail brands, most frequent first; names are unique (rank-suffixed past the first 400). */
export function buildTailBrands(): BrandProfile[] {
  const seen = new Set(BRANDS.map((brand) => brand.name.toLowerCase()));
  const list: BrandProfile[] = [];
  for (let rank = 0; list.length < TAIL_BRAND_COUNT; rank += 1) {
    const brand = tailBrand(rank);
    if (seen.has(brand.name.toLowerCase())) continue;
    seen.add(brand.name.toLowerCase());
    list.push(brand);
  }
  return list;
}

/** A 0-based rank in [0, count) with P(rank) roughly proportional to 1 / (rank + 1). */
export function zipfRank(random: Random, count: number): number {
  return Math.min(count - 1, Math.floor(Math.exp(random.next() * Math.log(count + 1))) - 1);
}

const HEAD_WEIGHT = BRANDS.reduce((sum, brand) => sum + brand.weight, 0);
export function pickBrandProfile(random: Random): BrandProfile {
  if (random.next() >= HEAD_SHARE) return tailBrands()[zipfRank(random, TAIL_BRAND_COUNT)]!;
  let roll = random.next() * HEAD_WEIGHT;
  for (const brand of BRANDS) {
    roll -= brand.weight;
    if (roll < 0) return brand;
  }
  return BRANDS[0]!;
}

export interface Shop {
  name: string;
  /** An IRI: non-ASCII hosts stay unencoded, as feeds give them. */
  url: string;
  currency: string;
  /** The shop's UTC offset in minutes, used in the timestamps it reports. */
  offsetMinutes: number;
  /** Some shops write titles in capitals. */
  upperCaseTitles: boolean;
}

const NAMED_SHOPS: readonly Omit<Shop, 'offsetMinutes' | 'upperCaseTitles'>[] = [
  { name: 'Sneaker Hub', url: 'https://sneakerhub.example.com', currency: 'USD' },
  { name: 'Kicks Depot', url: 'https://kicksdepot.example.com', currency: 'USD' },
  { name: 'Sole Supply', url: 'https://solesupply.example.com', currency: 'USD' },
  { name: 'Court Classics', url: 'https://courtclassics.example.co.uk', currency: 'GBP' },
  { name: 'Trail & Road', url: 'https://trailandroad.example.de', currency: 'EUR' },
  { name: 'Urban Stride', url: 'https://urbanstride.example.nl', currency: 'EUR' },
  { name: 'Ünderground', url: 'https://ünderground.example.de', currency: 'EUR' },
  { name: 'Sneakerbox Zürich', url: 'https://sneakerbox-zürich.example.ch', currency: 'CHF' },
  { name: '東京スニーカー', url: 'https://東京スニーカー.example.jp', currency: 'JPY' },
  { name: 'Café Chaussures', url: 'https://café-chaussures.example.fr', currency: 'EUR' },
  { name: 'Øresund Kicks', url: 'https://øresund-kicks.example.dk', currency: 'DKK' },
  { name: 'Señor Zapato', url: 'https://señor-zapato.example.es', currency: 'EUR' },
];
const CURRENCIES = [['USD', -300], ['EUR', 60], ['GBP', 0], ['JPY', 540], ['AUD', 600], ['CAD', -240]] as const;

let shops: readonly Shop[] | undefined;
/** The shops (buildShops), built once per process. */
export function allShops(): readonly Shop[] {
  return (shops ??= buildShops());
}

/** The named shops, then generated ones up to SHOP_COUNT, names unique (numbered past 200). */
export function buildShops(): Shop[] {
  const list: Shop[] = NAMED_SHOPS.map((shop, i) => ({
    ...shop,
    offsetMinutes: shop.currency === 'USD' ? -300 : shop.currency === 'JPY' ? 540 : shop.currency === 'GBP' ? 0 : 60,
    upperCaseTitles: i === 1 || i === 7,
  }));
  for (let n = 0; list.length < SHOP_COUNT; n += 1) {
    const [currency, offsetMinutes] = CURRENCIES[n % CURRENCIES.length]!;
    const name = `${wordFor(n, 5)} ${['Kicks', 'Sneakers', 'Footwear', 'Sole Store', 'Schuhe', 'Laces'][n % 6]!}${n >= 200 ? ` ${n}` : ''}`;
    const host = name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-');
    list.push({ name, url: `https://${host}.example.com`, currency, offsetMinutes, upperCaseTitles: n % 10 === 3 });
  }
  return list;
}

export function pickShop(random: Random): Shop {
  return allShops()[zipfRank(random, SHOP_COUNT)]!;
}
