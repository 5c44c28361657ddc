// Prints each product's current prices, then every change of them, with nothing missed in
// between; Ctrl-C stops it cleanly.
//
//   CATALOG_API_KEY=<pro key> node examples/watch-products.ts <product id or slug>... [--market US]
//
// Inside the workspace build the package first (`pnpm --filter @catalog/client build`); the import
// below then resolves to this package's dist/, exactly as it does in a project that installed it.
import { CatalogApiError, PriceStreamError, createCatalogClient } from '@catalog/client';

const apiKey = process.env['CATALOG_API_KEY'];
if (apiKey === undefined || apiKey === '') {
  console.error('Set CATALOG_API_KEY to a Pro API key.');
  process.exit(2);
}
const args = process.argv.slice(2);
const marketAt = args.indexOf('--market');
const markets = marketAt === -1 ? undefined : [args[marketAt + 1] ?? 'US'];
const products = args.filter((_, i) => marketAt === -1 || (i !== marketAt && i !== marketAt + 1));
if (products.length === 0) {
  console.error('Name at least one product id or slug.');
  process.exit(2);
}

const catalog = createCatalogClient({
  baseUrl: process.env['CATALOG_BASE_URL'] ?? 'http://localhost:8080',
  sseUrl: process.env['CATALOG_SSE_URL'] ?? 'http://localhost:8081',
  apiKey,
});
const controller = new AbortController();
process.once('SIGINT', () => controller.abort());

try {
  for await (const item of catalog.watchProducts({ products, markets, signal: controller.signal })) {
    if (item.type === 'snapshot') {
      console.log(`${item.product}: ${item.prices.length} current prices (stream position ${item.position})`);
      for (const p of item.prices) console.log(`  size ${p.size} ${p.source} ${p.market}: ${p.price} ${p.currency}`);
    } else {
      const p = item.data;
      console.log(`${item.id} ${p.product_id} size ${p.size} ${p.source} ${p.market}: ${p.price} ${p.currency}`);
    }
  }
} catch (error) {
  if (!(error instanceof CatalogApiError || error instanceof PriceStreamError)) throw error;
  console.error(`refused: ${error.status} ${error.code}: ${error.message}`);
  process.exitCode = 1;
}
