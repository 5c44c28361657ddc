// Import: an NDJSON file of catalog products totalling about the requested number of variants,
// timed through `catalog import --kind catalog` into a fresh SQLite database. The file comes from
// `catalog seed --out` (the seed's own data) when the CLI has it, else from the small
// shared builders (`@catalog/contract/testing`) made deterministic below, checked against the
// contract's CatalogProductPro schema.
import { createContractAjv } from '@catalog/contract/ajv';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CatalogProductPro, CatalogVariant } from '@catalog/contract';
import { openapiDocument } from '@catalog/contract/documents';
import { buildCatalogProduct, buildCatalogVariant } from '@catalog/contract/testing';
import { lastLines, progress, runCli } from './lib/processes.ts';

export interface ImportResult {
  products: number;
  variants: number;
  fileBytes: number;
  generateSeconds: number;
  importSeconds: number;
  variantsPerSecond: number;
  /** The import command's own last line (counts, bad lines). */
  summary: string;
  source: 'seed --out' | 'builders';
  /** The same file into a fresh PostgreSQL database, when the bench has a server. */
  postgres?: { importSeconds: number; variantsPerSecond: number; summary: string };
}

const BRANDS = ['Nike', 'Jordan', 'Adidas', 'New Balance', 'Asics', 'Puma', 'Converse', 'Vans', 'Reebok', 'Salomon'];
const MODELS = ['Dunk Low', 'Air Max 90', 'Samba OG', '990v6', 'Gel-Kayano 14', 'Suede Classic', 'Chuck 70', 'Old Skool', 'Club C 85', 'XT-6'];
const COLORS = ['White/Black', 'Black/White', 'Grey/Navy', 'Red/White', 'Cream/Green'];
const SIZES = ['7', '7.5', '8', '8.5', '9', '9.5', '10', '10.5', '11', '11.5', '12', '13'];

function uuid(kind: number, index: number): string {
  const hex = index.toString(16).padStart(12, '0');
  return `b3c4${kind.toString(16).padStart(4, '0')}-0000-4000-8000-${hex}`;
}

/** The shared builder's variant, deterministic: ids, GTIN, size and price follow `index`. */
function benchCatalogVariant(product: CatalogProductPro, index: number, sizeIndex: number): CatalogVariant {
  const size = SIZES[sizeIndex % SIZES.length] ?? '10';
  return buildCatalogVariant({
    id: uuid(2, index),
    product_id: product.id,
    sku: product.sku,
    title: product.title,
    description: product.description,
    brand: product.brand,
    color: product.color,
    gtin: String(190_000_000_000 + index).padStart(14, '0'),
    size,
    link: `https://go.example.com/marketplacea/${product.sku.toLowerCase()}?size=${size}`,
    image: product.image,
    price: 90 + (index % 120),
    tags: ['bench', product.brand.toLowerCase().replaceAll(' ', '-')],
    metadata: { category: 'Sneakers', model: MODELS[index % MODELS.length] ?? 'Dunk Low' },
    source: index % 2 === 0 ? 'marketplacea' : 'marketplaceb',
  });
}

/** The shared builder's product, deterministic: the `index`-th of ten brands and ten models, prices from its variants. */
export function benchCatalogProduct(index: number, variantsPerProduct: number): CatalogProductPro {
  const brand = BRANDS[index % BRANDS.length] ?? 'Nike';
  const model = MODELS[(index >> 3) % MODELS.length] ?? 'Dunk Low';
  const sku = `BI${String(index).padStart(7, '0')}-100`;
  const image = `https://cdn.example.com/images/${sku.toLowerCase()}-1.jpg`;
  const product = buildCatalogProduct({
    id: uuid(1, index),
    slug: `${brand}-${model}-${index}`.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    sku,
    title: `${brand} ${model} ${index}`,
    brand,
    color: COLORS[index % COLORS.length] ?? 'White/Black',
    description: `${brand} ${model}.<br>Generated for the import benchmark.`,
    image,
    images: index % 3 === 0 ? null : [image],
    trending: index % 7 === 0,
    release_dates: [{ sku, release_date: '2021-03-10', source: 'marketplacea_2021_03_10' }],
    retail_prices: [{ sku, price: 110, currency: 'USD', source: 'srp' }],
    variants: [],
    weekly_orders: index % 500,
  });
  for (let v = 0; v < variantsPerProduct; v++) product.variants.push(benchCatalogVariant(product, index * variantsPerProduct + v, v));
  const prices = product.variants.map((variant) => variant.price);
  product.min_price = Math.min(...prices);
  product.max_price = Math.max(...prices);
  product.avg_price = Math.round((prices.reduce((a, b) => a + b, 0) / prices.length) * 100) / 100;
  product.links = [{ link: `https://go.example.com/marketplacea/${sku.toLowerCase()}`, target: 'marketplacea', min_price: product.min_price }];
  return product;
}

/** Throws unless the builder's output matches the contract's CatalogProductPro schema. */
export function checkAgainstContract(product: CatalogProductPro): void {
  const ajv = createContractAjv({ allErrors: true });
  ajv.addSchema({ ...openapiDocument, $id: 'openapi.json' });
  const validate = ajv.getSchema('openapi.json#/components/schemas/CatalogProductPro');
  if (validate === undefined) throw new Error('CatalogProductPro is missing from the bundled OpenAPI document');
  if (validate(product) !== true) throw new Error(`the import builder does not match the contract: ${ajv.errorsText(validate.errors)}`);
}

async function writeWithBuilders(file: string, products: number, variantsPerProduct: number): Promise<void> {
  checkAgainstContract(benchCatalogProduct(0, variantsPerProduct));
  const out = createWriteStream(file);
  for (let i = 0; i < products; i++) {
    if (!out.write(`${JSON.stringify(benchCatalogProduct(i, variantsPerProduct))}\n`)) await once(out, 'drain');
    if (i > 0 && i % 20_000 === 0) progress(`import: generated ${i}/${products} products`);
  }
  out.end();
  await once(out, 'finish');
}

/** `seed --out DIR` writes DIR/catalog.ndjson; resolves with its variant count, or null when the CLI cannot. */
async function writeWithSeed(cli: string, dir: string, products: number): Promise<number | null> {
  try {
    const run = await runCli(cli, ['seed', '--products', String(products), '--out', dir]);
    const match = /(\d+) variants/.exec(`${run.stdout}\n${run.stderr}`);
    return match?.[1] === undefined ? products * 10 : Number(match[1]);
  } catch {
    return null;
  }
}

export async function runImportBench(options: {
  cli: string;
  variants: number;
  variantsPerProduct: number;
  notes: string[];
  /** Creates an empty database and returns its URL, for the PostgreSQL row. */
  postgres?: { createDatabase: () => Promise<string> };
}): Promise<ImportResult> {
  const products = Math.ceil(options.variants / options.variantsPerProduct);
  const dir = mkdtempSync(join(tmpdir(), 'bench-import-'));
  try {
    const file = join(dir, 'catalog.ndjson');
    const generateStart = performance.now();
    progress(`import: writing ${products} catalog products`);
    let variants = await writeWithSeed(options.cli, dir, products);
    const source = variants === null ? 'builders' : 'seed --out';
    if (variants === null) {
      options.notes.push('import: `catalog seed --out` was not available; the file comes from the bench builders.');
      await writeWithBuilders(file, products, options.variantsPerProduct);
      variants = products * options.variantsPerProduct;
    }
    const generateSeconds = (performance.now() - generateStart) / 1000;
    const fileBytes = statSync(file).size;
    progress(`import: ${products} products, ${variants} variants, ${(fileBytes / 1e6).toFixed(0)} MB (${source}) in ${generateSeconds.toFixed(1)} s; importing`);
    const run = await runCli(options.cli, ['import', '--db', `sqlite:${join(dir, 'import.db')}`, '--kind', 'catalog', file], { echo: true });
    const importSeconds = run.ms / 1000;
    const summary = lastLines(run.stdout.trim() === '' ? run.stderr : run.stdout, 1);
    const result: ImportResult = { products, variants, fileBytes, generateSeconds, importSeconds, variantsPerSecond: variants / importSeconds, summary, source };
    if (options.postgres !== undefined) {
      try {
        const url = await options.postgres.createDatabase();
        progress('import: the same file into PostgreSQL');
        const pgRun = await runCli(options.cli, ['import', '--db', url, '--kind', 'catalog', file], { echo: true });
        const pgSeconds = pgRun.ms / 1000;
        result.postgres = { importSeconds: pgSeconds, variantsPerSecond: variants / pgSeconds, summary: lastLines(pgRun.stdout.trim() === '' ? pgRun.stderr : pgRun.stdout, 1) };
      } catch (error) {
        options.notes.push(`import: PostgreSQL failed (${(error as Error).message}).`);
      }
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
