/*
 * watchProducts: each product's latest prices (`getProductPrices`), then every change of them on
 * the price stream, with no gap and no duplicate.
 *
 * How: every snapshot carries `meta.stream_position`, the newest stream id it reflects. The stream
 * is opened once, filtered to the products (`Filter: product_id IN [...]`, plus markets and
 * sources), with `Last-Event-ID` at the lowest of those positions; an event at or below its own
 * product's position is already in that product's snapshot and is skipped, every later one is
 * yielded. The stream resumes from the last id it received across reconnects and server restarts
 * (priceStream). When the server answers with a `reset` (the events after a position are no
 * longer retained), the snapshots are read and yielded again, and the same rule continues.
 * A refusal (400 `invalid_filter`, 401, 403, 404 for an unknown product) is thrown, never retried.
 */
import type { GetProductPricesResponse, GetProductResponse, PriceEvent } from '@catalog/contract/types';
import type { PriceStreamItem, PriceStreamOptions, PriceStreamPrice } from './price-stream.js';

export interface WatchProductsOptions {
  /** Products by id (UUID) or slug. */
  products: readonly string[];
  /** Two-letter market codes (any case); by default every market the API documents. */
  markets?: readonly string[] | undefined;
  /** By default both sources. */
  sources?: readonly PriceEvent['source'][] | undefined;
  /** Ends the watch: the stream is closed and the loop ends without an error. */
  signal?: AbortSignal | undefined;
  /** Passed to the price stream (logging of reconnects). */
  onReconnect?: PriceStreamOptions['onReconnect'];
}

/** One product's latest price events (one per variant, source and market) and the stream id they reflect. */
export interface WatchedSnapshot {
  type: 'snapshot';
  /** The product as given in `products`. */
  product: string;
  productId: string;
  prices: PriceEvent[];
  position: number;
}

export type WatchedItem = WatchedSnapshot | PriceStreamPrice;

export interface WatchProductsDeps {
  getProduct(idOrSlug: string): Promise<GetProductResponse>;
  getProductPrices(idOrSlug: string): Promise<GetProductPricesResponse>;
  priceStream(options: PriceStreamOptions): AsyncGenerator<PriceStreamItem, void, undefined>;
}

/** The markets of the API description's Markets section. */
const DOCUMENTED_MARKETS = ['us', 'uk', 'de', 'fr', 'nl', 'it', 'es', 'jp', 'ca', 'au'];
const SOURCES = ['marketplacea', 'marketplaceb'] as const satisfies readonly PriceEvent['source'][];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A filter-language string literal. */
const quoted = (value: string): string => `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;

export async function* watchProducts(deps: WatchProductsDeps, options: WatchProductsOptions): AsyncGenerator<WatchedItem, void, undefined> {
  if (options.products.length === 0) throw new TypeError('watchProducts needs at least one product');
  const markets = (options.markets ?? DOCUMENTED_MARKETS).map((market) => market.toLowerCase());
  const sources = options.sources ?? SOURCES;
  const wanted = (event: PriceEvent): boolean => markets.includes(event.market.toLowerCase()) && sources.includes(event.source);
  /** The snapshot position of each product, by its id in lower case (the filter compares ids by the text rule). */
  const positions = new Map<string, number>();

  async function* snapshots(): AsyncGenerator<WatchedSnapshot> {
    for (const product of options.products) {
      const { data, meta } = await deps.getProductPrices(product);
      const productId = UUID.test(product) ? product : (data[0]?.product_id ?? (await deps.getProduct(product)).data.id);
      positions.set(productId.toLowerCase(), meta.stream_position);
      yield { type: 'snapshot', product, productId, prices: data.filter(wanted), position: meta.stream_position };
    }
  }

  const ids: string[] = [];
  for await (const snapshot of snapshots()) {
    ids.push(snapshot.productId);
    yield snapshot;
  }
  const filter = [
    `product_id IN [${ids.map(quoted).join(', ')}]`,
    `market IN [${markets.map(quoted).join(', ')}]`,
    `source IN [${sources.map(quoted).join(', ')}]`,
  ].join(' AND ');
  const stream = deps.priceStream({
    topics: sources.flatMap((source) => markets.map((market) => `price:${source}:${market}`)),
    filter,
    lastEventId: Math.min(...positions.values()),
    signal: options.signal,
    onReconnect: options.onReconnect,
  });
  for await (const item of stream) {
    if (item.type === 'reset') {
      yield* snapshots();
      continue;
    }
    const position = positions.get(item.data.product_id.toLowerCase());
    if (position === undefined || item.id <= position) continue;
    yield item;
  }
}
