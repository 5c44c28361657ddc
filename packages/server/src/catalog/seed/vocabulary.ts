// Real-looking vocabulary for the synthetic catalog: brands with their models, SKU styles and GTIN
// company prefixes, colourways, sizes, sources and storefront shops. Names are illustrative only.
import type { Random } from './prng.ts';

export interface BrandProfile {
  name: string;
  /** Relative share of the catalog. */
  weight: number;
  models: readonly string[];
  productType: string;
  category: string;
  /** Builds a SKU in the brand's style from a per-product number. */
  sku(random: Random, n: number): string;
  /** First digits of the brand's GTINs (GS1 company prefix style). */
  gtinPrefix: string;
  retail: readonly [number, number];
}

const LETTERS = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
const letters = (random: Random, count: number): string =>
  Array.from({ length: count }, () => random.pick([...LETTERS])).join('');
const digits = (n: number, width: number): string => String(n % 10 ** width).padStart(width, '0');

export const BRANDS: readonly BrandProfile[] = [
  {
    name: 'Nike', weight: 22, productType: 'Sneakers', category: 'Sneakers > Low Top', gtinPrefix: '19',
    models: ['Dunk Low Retro', 'Air Force 1 \'07', 'Air Max 90', 'Air Max 1', 'Blazer Mid \'77', 'Pegasus 41', 'Vomero 5', 'Cortez', 'Air Max Plus', 'Killshot 2'],
    sku: (random, n) => `${letters(random, 2)}${digits(n, 4)}-${random.pick(['100', '001', '002', '101', '600', '400', '300', '700'])}`,
    retail: [90, 200],
  },
  {
    name: 'Jordan', weight: 12, productType: 'Sneakers', category: 'Sneakers > High Top', gtinPrefix: '19',
    models: ['Air Jordan 1 Retro High OG', 'Air Jordan 1 Low', 'Air Jordan 3 Retro', 'Air Jordan 4 Retro', 'Air Jordan 11 Retro', 'Air Jordan 5 Retro'],
    sku: (random, n) => `${letters(random, 2)}${digits(n, 4)}-${random.pick(['161', '106', '006', '140', '060', '612'])}`,
    retail: [140, 230],
  },
  {
    name: 'Adidas', weight: 16, productType: 'Sneakers', category: 'Sneakers > Low Top', gtinPrefix: '40',
    models: ['Samba OG', 'Gazelle', 'Campus 00s', 'Superstar', 'Stan Smith', 'Ultraboost 1.0', 'Forum Low', 'Handball Spezial', 'Adizero Adios Pro 3'],
    sku: (random, n) => `${letters(random, 2)}${digits(n, 4)}`,
    retail: [80, 220],
  },
  {
    name: 'New Balance', weight: 10, productType: 'Sneakers', category: 'Sneakers > Running', gtinPrefix: '19',
    models: ['990v6', '550', '2002R', '9060', '574', '1906R', '327', '992'],
    sku: (random, n) => `${random.pick(['M', 'U', 'BB', 'ML'])}${digits(n, 4)}${letters(random, 2)}${random.int(1, 9)}`,
    retail: [90, 200],
  },
  {
    name: 'Asics', weight: 7, productType: 'Running Shoes', category: 'Sneakers > Running', gtinPrefix: '45',
    models: ['Gel-Kayano 14', 'Gel-1130', 'Gel-NYC', 'Gel-Nimbus 26', 'GT-2160', 'Novablast 4'],
    sku: (random, n) => `${random.pick(['1201A', '1011B', '1203A', '1012B'])}${digits(n, 3)}-${digits(random.int(0, 999), 3)}`,
    retail: [100, 180],
  },
  {
    name: 'Puma', weight: 5, productType: 'Sneakers', category: 'Sneakers > Low Top', gtinPrefix: '40',
    models: ['Suede Classic', 'Palermo', 'Speedcat OG', 'RS-X', 'Mostro'],
    sku: (random, n) => `${digits(300000 + n, 6)}-${digits(random.int(1, 20), 2)}`,
    retail: [70, 130],
  },
  {
    name: 'Converse', weight: 5, productType: 'Sneakers', category: 'Sneakers > High Top', gtinPrefix: '88',
    models: ['Chuck 70 High', 'Chuck Taylor All Star Low', 'Run Star Hike', 'One Star Pro'],
    sku: (random, n) => `${random.pick(['A0', '16', '17'])}${digits(n, 4)}C`,
    retail: [60, 110],
  },
  {
    name: 'Vans', weight: 5, productType: 'Sneakers', category: 'Sneakers > Skate', gtinPrefix: '19',
    models: ['Old Skool', 'Sk8-Hi', 'Authentic', 'Era', 'Knu Skool', 'Slip-On'],
    sku: (random, n) => `VN0${letters(random, 1)}${digits(n, 4)}${letters(random, 3)}`,
    retail: [60, 110],
  },
  {
    name: 'Salomon', weight: 4, productType: 'Trail Shoes', category: 'Sneakers > Trail', gtinPrefix: '19',
    models: ['XT-6', 'Speedcross 6', 'ACS Pro', 'XT-Whisper', 'Odyssey ELMT'],
    sku: (_random, n) => `L4${digits(n, 4)}000`,
    retail: [130, 220],
  },
  {
    name: 'Hoka', weight: 4, productType: 'Running Shoes', category: 'Sneakers > Running', gtinPrefix: '19',
    models: ['Clifton 9', 'Bondi 8', 'Mafate Speed 2', 'Speedgoat 6', 'Tor Ultra Low'],
    sku: (random, n) => `11${digits(n, 5)}-${letters(random, 4)}`,
    retail: [140, 200],
  },
  {
    name: 'On', weight: 3, productType: 'Running Shoes', category: 'Sneakers > Running', gtinPrefix: '76',
    models: ['Cloud 5', 'Cloudmonster', 'Cloudtilt', 'Cloudsurfer', 'The Roger Advantage'],
    sku: (_random, n) => `${digits(40 + (n % 60), 2)}.${digits(n, 5)}`,
    retail: [140, 220],
  },
  {
    name: 'Reebok', weight: 3, productType: 'Sneakers', category: 'Sneakers > Low Top', gtinPrefix: '40',
    models: ['Club C 85', 'Classic Leather', 'Instapump Fury', 'Question Mid'],
    sku: (random, n) => `${letters(random, 2)}${digits(n, 4)}`,
    retail: [70, 180],
  },
  {
    name: 'Timberland', weight: 2, productType: 'Boots', category: 'Boots > Ankle', gtinPrefix: '19',
    models: ['6 Inch Premium Boot', 'Euro Hiker', '3-Eye Lug Handsewn'],
    sku: (_random, n) => `TB0${digits(n, 5)}`,
    retail: [150, 230],
  },
  {
    name: 'Birkenstock', weight: 2, productType: 'Sandals', category: 'Sandals > Slides', gtinPrefix: '40',
    models: ['Arizona', 'Boston', 'Madrid', 'Gizeh'],
    sku: (_random, n) => `${digits(1000000 + n, 7)}`,
    retail: [100, 170],
  },
];

export const COLOURWAYS: readonly { name: string; color: string; tag: string }[] = [
  { name: 'White Black Panda', color: 'White/Black', tag: 'White' },
  { name: 'Triple White', color: 'White', tag: 'White' },
  { name: 'Triple Black', color: 'Black', tag: 'Black' },
  { name: 'University Blue', color: 'White/University Blue', tag: 'Blue' },
  { name: 'Chicago', color: 'White/Varsity Red/Black', tag: 'Red' },
  { name: 'Bred', color: 'Black/Varsity Red', tag: 'Red' },
  { name: 'Grey Fog', color: 'White/Grey Fog', tag: 'Grey' },
  { name: 'Sail Gum', color: 'Sail/Gum Light Brown', tag: 'Beige' },
  { name: 'Olive Khaki', color: 'Olive/Khaki', tag: 'Green' },
  { name: 'Navy Gold', color: 'Navy/Gold', tag: 'Navy' },
  { name: 'Pink Foam', color: 'Pink Foam/White', tag: 'Pink' },
  { name: 'Orange Blaze', color: 'Orange/Black', tag: 'Orange' },
  { name: 'Wheat', color: 'Wheat/Wheat', tag: 'Brown' },
  { name: 'Cream Green', color: 'Cream/Green', tag: 'Green' },
];

export const SIZES: readonly string[] = ['6', '6.5', '7', '7.5', '8', '8.5', '9', '9.5', '10', '10.5', '11', '11.5', '12', '13', '14'];

/** Sources of catalog variants and prices (the first two stream prices too). */
export const VARIANT_SOURCES: readonly string[] = ['marketplacea', 'marketplaceb'];
/** Other sources seen in links and release dates. */
export const OTHER_SOURCES: readonly string[] = ['solecollector', 'kicksregistry', 'stockroom', 'heatcheck'];

export const TAG_LABELS: Readonly<Record<string, readonly string[]>> = {
  AUTO: ['Restock', 'NewArrival', 'BestSeller', 'LowStock', 'BackInStock', 'Sale', 'Exclusive', 'PreOrder', 'LastSizes', 'Trending'],
  FUNCTIONALITY: ['Running', 'Lifestyle', 'Basketball', 'Skate', 'Trail', 'Waterproof', 'Hiking', 'Training', 'Tennis', 'Walking', 'Football', 'Gore-Tex', 'Slip-Resistant', 'Vegan'],
  HEELTYPE: ['Flat', 'Platform', 'Cushioned', 'Wedge', 'Block', 'Stacked', 'Low Heel'],
  SEASON: ['SS23', 'FW23', 'SS24', 'FW24', 'SS25', 'FW25', 'SS26', 'FW26', 'Holiday26', 'Resort26'],
  SOLEMATERIAL: ['Rubber', 'Gum', 'EVA', 'Foam', 'Vibram', 'TPU', 'Cork', 'Crepe', 'Leather'],
  STYLE: ['Low', 'Mid', 'High', 'Slip-On', 'Chunky', 'Retro', 'Minimal', 'Skate', 'Court', 'Runner', 'Chelsea', 'Mule', 'Clog'],
  TOETYPE: ['Round', 'Square', 'Pointed', 'Almond', 'Open', 'Capped'],
};

export const MATERIALS: readonly string[] = ['leather', 'suede', 'mesh', 'canvas', 'knit', 'nubuck'];
