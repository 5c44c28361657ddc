import type { Handlers } from '../../generated/handlers.gen.ts';
import type { RequestContext } from '../context.ts';

export const listTopBrands: Handlers<RequestContext>['listTopBrands'] = async (_request, { catalog }) => ({
  status: 200,
  body: { status: 'success', error: '', message: '', query: {}, data: await catalog.listTopBrands(), meta: null },
});
