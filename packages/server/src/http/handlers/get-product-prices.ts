import type { ProductPriceList } from '@catalog/contract';
import { jsonOf } from '../../catalog/raw-json.ts';
import type { ApiHandler } from './api-services.ts';
import { v2Splice } from '../envelope.ts';

export const getProductPrices: ApiHandler<'getProductPrices'> = async ({ params, query }, { catalog, prices }) => {
  const productId = await catalog.productIdOf(params.id);
  const { data, position } = await prices.latest(productId, query);
  return { status: 200, body: v2Splice<ProductPriceList>(data, jsonOf({ stream_position: position })) };
};
