// A product's latest prices, as getProductPrices answers them: the latest-price store's events of
// that product (those whose `product_id` is the catalog product's `id`), narrowed by market and
// source, with the stream position they reflect. The log splices the events as it holds them, the
// same bytes the stream sends.
import type { PriceEvent } from '../catalog/model.ts';
import type { RawJson } from '../catalog/raw-json.ts';
import type { PriceLog } from './price-log.ts';

export interface ProductPricesQuery {
  /** Two letters, any case. */
  market?: string;
  source?: string;
}

export interface ProductPricesAnswer {
  data: RawJson<PriceEvent[]>;
  position: number;
}

export class ProductPrices {
  readonly #log: Pick<PriceLog, 'latestPrices'>;

  constructor(log: Pick<PriceLog, 'latestPrices'>) {
    this.#log = log;
  }

  latest(productId: string, query: ProductPricesQuery): Promise<ProductPricesAnswer> {
    // Topics hold the market in lowercase.
    return this.#log.latestPrices(productId, { ...(query.source === undefined ? {} : { source: query.source }), ...(query.market === undefined ? {} : { market: query.market.toLowerCase() }) });
  }
}
