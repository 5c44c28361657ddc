// A product's latest prices, as getProductPrices answers them: the latest-price store's events of
// that product (those whose `product_id` is the catalog product's `id`), narrowed by market and
// source, with the stream position they reflect. The events are spliced as the log holds them, the
// same bytes the stream sends.
import type { PriceEvent } from '../catalog/model.ts';
import { storedJson, type RawJson } from '../catalog/raw-json.ts';
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

  async latest(productId: string, query: ProductPricesQuery): Promise<ProductPricesAnswer> {
    const { events, position } = await this.#log.latestPrices(productId);
    // The topic is `price:<source>:<market in lowercase>`: it answers both without a parse.
    const market = query.market?.toLowerCase();
    const data: string[] = [];
    for (const event of events) {
      const [, source, topicMarket] = event.topic.split(':');
      if ((query.source === undefined || source === query.source) && (market === undefined || topicMarket === market)) data.push(event.data);
    }
    return { data: storedJson<PriceEvent[]>(`[${data.join(',')}]`), position };
  }
}
