import type { ProductDetail } from '@catalog/contract';
import type { ApiHandler } from './api-services.ts';
import { v2Body, v2Splice } from '../envelope.ts';

export const getProduct: ApiHandler<'getProduct'> = async ({ params }, { catalog, plan }) => {
  const found = await catalog.getProduct(params.id, plan);
  if (found.plan === 'pro') return { status: 200, body: v2Splice<ProductDetail>(found.document) };
  return { status: 200, body: v2Body(found.product) };
};
