// Follows the live price stream and prints each event; Ctrl-C stops it cleanly.
//
//   CATALOG_SSE_URL=http://localhost:8081 CATALOG_API_KEY=<pro key> \
//   TOPICS=price:marketplacea:us,price:marketplaceb:nl node examples/watch-prices.ts [last-event-id]
//
// Inside the workspace build the package first (`pnpm --filter @catalog/client build`); the import
// below then resolves to this package's dist/, exactly as it does in a project that installed it.
import { PriceStreamError, createCatalogClient } from '@catalog/client';

const apiKey = process.env['CATALOG_API_KEY'];
if (apiKey === undefined || apiKey === '') {
  console.error('Set CATALOG_API_KEY to a Pro API key.');
  process.exit(2);
}

const catalog = createCatalogClient({
  baseUrl: process.env['CATALOG_BASE_URL'] ?? 'http://localhost:8080',
  sseUrl: process.env['CATALOG_SSE_URL'] ?? 'http://localhost:8081',
  apiKey,
});

const topics = (process.env['TOPICS'] ?? 'price:marketplacea:us').split(',').map((topic) => topic.trim());
const resumeFrom = process.argv[2];
const controller = new AbortController();
process.once('SIGINT', () => controller.abort());

let lastEventId: number | undefined;
try {
  for await (const item of catalog.priceStream({
    topics,
    ...(resumeFrom === undefined ? {} : { lastEventId: resumeFrom }),
    signal: controller.signal,
    // A real consumer persists this (file, database) and passes it back as `lastEventId` on restart.
    onLastEventId: (id) => (lastEventId = id),
    onReconnect: ({ attempt, delayMs, error }) => console.error(`reconnecting in ${delayMs} ms (attempt ${attempt}): ${String(error)}`),
  })) {
    switch (item.type) {
      case 'price':
        console.log(`${item.id} ${item.topic} ${item.data.sku} size ${item.data.size}: ${item.data.price} ${item.data.currency}`);
        break;
      case 'reset':
        console.warn(`events ${item.requestedId + 1}..${item.oldestId - 1} are no longer retained; replay starts at ${item.oldestId}`);
        break;
    }
  }
} catch (error) {
  if (!(error instanceof PriceStreamError)) throw error;
  console.error(`the stream refused the subscription: ${error.status} ${error.code}: ${error.message} (request ${error.requestId ?? '?'})`);
  process.exitCode = 1;
}
console.error(`stopped; resume with: node examples/watch-prices.ts ${lastEventId ?? resumeFrom ?? ''}`);
