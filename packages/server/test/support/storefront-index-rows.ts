// Random storefront index rows for the index's property tests: a small vocabulary with letter-case
// twins, non-ASCII and repeated values, so that filters match some rows, miss others and meet
// folding and duplicates.
import type { Random } from '../../src/catalog/seed/prng.ts';
import type { StorefrontIndexRow } from '../../src/catalog/storefront-index/columns.ts';

export const SHOPS = ['Sneaker Hub', 'Ünderground', 'ÜNDERGROUND', 'Sneakerbox Zürich', '東京スニーカー', 'Kicks Lab'];
export const BRANDS = ['Nike', 'NIKE', 'Arc’teryx', 'Stüssy', 'adidas', 'New Balance'];
export const TAGS = ['COLOR_Black', 'color_black', 'SEASON_SS24', 'STYLE_Runner', 'AUTO_Ünique', '0195866123456', 'TOETYPE_Round'];
export const TITLES = ['Air Max 90', 'Dunk Low Retro', 'Gel-Lyte III Ça va', 'Ünder Boot', 'Tee 🎱 eight ball', 'Runner São Paulo'];

export function pick<T>(random: Random, values: readonly T[]): T {
  return values[random.int(0, values.length - 1)]!;
}

export function buildRow(random: Random, cursor: number, id: string): StorefrontIndexRow {
  return {
    cursor,
    id,
    product_id: String(random.int(1, 30)),
    shop_name: pick(random, SHOPS),
    brand: pick(random, BRANDS),
    product_type: pick(random, ['Shoes', 'shoes', 'Apparel']),
    title: pick(random, TITLES),
    slug: pick(random, ['air-max', 'AIR-MAX', 'dunk', 'ünder']),
    price_min: random.int(0, 20) * 10,
    price_max: random.int(0, 20) * 10,
    price_display: random.int(0, 20) * 10,
    available: random.chance(0.5),
    created_at: random.int(0, 5) * 1000,
    updated_at: random.int(0, 5) * 1000,
    product_created_at: random.int(0, 5) * 1000,
    product_published_at: random.int(0, 5) * 1000,
    tags: Array.from({ length: random.int(0, 3) }, () => pick(random, TAGS)),
  };
}
