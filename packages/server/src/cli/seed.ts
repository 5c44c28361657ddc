// `catalog seed --db <url> [--products N | --storefront-products N] [--seed S] [--out DIR]`: writes
// a deterministic synthetic catalog (N catalog products, about ten variants each, and N/2
// storefront products; or with --storefront-products only N storefront products) into the
// database, or with --out as NDJSON files (catalog.ndjson, storefront.ndjson) for `catalog import`.
// Products stream from the generator in batches; the catalog is never held in memory.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import {
  generateCatalogProducts,
  generateStorefrontProducts,
  storefrontCountFor,
  type SeedOptions,
} from '../catalog/seed/generate-catalog.ts';
import type { CatalogProductPro, StorefrontProductInput } from '../catalog/model.ts';
import { silentLogger } from '../logger.ts';
import { openCatalogStores } from '../store/open-store.ts';
import { commandSpec, parseCommand } from './command-line.ts';
import { createProgress, deferIndexesForBulkLoad, optimizeAfterBulkLoad, writeIndexSnapshot } from './cli-support.ts';
import { databaseUrlOf, numericValue, SEED_SETTINGS } from '../settings.ts';

const BATCH = 500;

export async function run(args: string[]): Promise<number> {
  let options: SeedOptions;
  let db: string;
  let out: string | undefined;
  let storefrontOnly: boolean;
  const parsed = parseCommand(commandSpec('seed'), args);
  if ('exit' in parsed) return parsed.exit;
  try {
    const { values } = parsed;
    const seed = (values['seed'] as string | undefined) ?? SEED_SETTINGS.seed.default;
    const storefrontProducts = numericValue('storefront-products', SEED_SETTINGS['storefront-products'], values['storefront-products'] as string | undefined);
    if (storefrontProducts !== undefined && values['products'] !== undefined) throw new Error('--products and --storefront-products exclude each other');
    storefrontOnly = storefrontProducts !== undefined;
    // Storefront product i does not depend on the catalog's size: N of them are those of a catalog of 2N.
    options = { products: storefrontProducts === undefined ? numericValue('products', SEED_SETTINGS.products, values['products'] as string | undefined)! : 2 * storefrontProducts, seed };
    db = databaseUrlOf(values);
    out = values['out'] as string | undefined;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const started = performance.now();
  const progress = createProgress();
  const storefronts = storefrontCountFor(options.products);
  const catalogProducts = storefrontOnly ? 0 : options.products;
  let variants = 0;
  const report = (done: number, what: string, total: number): void =>
    progress.update(`seeding ${what}: ${done}/${total} products, ${variants} variants`);

  if (out !== undefined) {
    mkdirSync(out, { recursive: true });
    const catalogFile = join(out, 'catalog.ndjson');
    const storefrontFile = join(out, 'storefront.ndjson');
    let done = 0;
    if (!storefrontOnly) {
      await writeLines(catalogFile, generateCatalogProducts(options), (product) => {
        variants += product.variants.length;
        done += 1;
        if (done % 1000 === 0) report(done, 'catalog', options.products);
      });
    }
    done = 0;
    await writeLines(storefrontFile, generateStorefrontProducts(options), () => {
      done += 1;
      if (done % 10_000 === 0) report(done, 'storefront', storefronts);
    });
    progress.done();
    const catalogPart = storefrontOnly ? '' : `${options.products} catalog products (${variants} variants) to ${catalogFile} and `;
    process.stdout.write(`wrote ${catalogPart}${storefronts} storefront products to ${storefrontFile} in ${seconds(started)}s (seed "${options.seed}")\n`);
    return 0;
  }

  const stores = await openCatalogStores(db, silentLogger, { indexSnapshotDir: 'default' });
  try {
    await deferIndexesForBulkLoad(stores.catalog);
    let batch: CatalogProductPro[] = [];
    let done = 0;
    for (const product of storefrontOnly ? [] : generateCatalogProducts(options)) {
      batch.push(product);
      variants += product.variants.length;
      if (batch.length === BATCH) {
        await stores.catalog.upsertCatalogProducts(batch);
        done += batch.length;
        batch = [];
        report(done, 'catalog', options.products);
      }
    }
    if (batch.length > 0) await stores.catalog.upsertCatalogProducts(batch);
    let storefrontBatch: StorefrontProductInput[] = [];
    done = 0;
    for (const product of generateStorefrontProducts(options)) {
      storefrontBatch.push(product);
      if (storefrontBatch.length === BATCH) {
        await stores.catalog.upsertStorefrontProducts(storefrontBatch);
        done += storefrontBatch.length;
        storefrontBatch = [];
        report(done, 'storefront', storefronts);
      }
    }
    if (storefrontBatch.length > 0) await stores.catalog.upsertStorefrontProducts(storefrontBatch);
    progress.update('rebuilding and optimizing search indexes');
    await optimizeAfterBulkLoad(stores.catalog);
    if (storefronts > 0) await writeIndexSnapshot(stores.catalog, progress.update);
  } finally {
    progress.done();
    await stores.close();
  }
  process.stdout.write(
    `seeded ${catalogProducts} catalog products (${variants} variants) and ${storefronts} storefront products into ${db} in ${seconds(started)}s (seed "${options.seed}")\n`,
  );
  return 0;
}

function seconds(started: number): string {
  return ((performance.now() - started) / 1000).toFixed(1);
}

async function writeLines<T>(file: string, items: Iterable<T>, each: (item: T) => void): Promise<void> {
  const stream: WriteStream = createWriteStream(file);
  for (const item of items) {
    each(item);
    if (!stream.write(`${JSON.stringify(item)}\n`)) await once(stream, 'drain');
  }
  stream.end();
  await once(stream, 'finish');
}
