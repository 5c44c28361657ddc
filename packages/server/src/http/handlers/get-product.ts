import type { Handlers } from '../../generated/handlers.gen.ts';
import type { ProductDetail } from '../../generated/types.gen.ts';
import type { RequestContext } from '../context.ts';
import { serialized } from '../serialized.ts';

export const getProduct: Handlers<RequestContext>['getProduct'] = async ({ params }, { catalog, plan }) => {
  const found = await catalog.getProduct(params.id, plan);
  if (found.plan === 'pro') {
    return {
      status: 200,
      body: serialized<ProductDetail>(`{"status":"success","error":"","message":"","query":{},"data":${found.document},"meta":null}`),
    };
  }
  return { status: 200, body: { status: 'success', error: '', message: '', query: {}, data: found.product, meta: null } };
};
