import type { Handlers } from '../../generated/handlers.gen.ts';
import type { RequestContext } from '../context.ts';

export const getProduct: Handlers<RequestContext>['getProduct'] = async ({ params }, { catalog, plan }) => ({
  status: 200,
  body: { status: 'success', error: '', message: '', query: {}, data: await catalog.getProduct(params.id, plan), meta: null },
});
