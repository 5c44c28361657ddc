import type { Handlers } from '../handler-types.ts';
import type { RequestContext } from '../context.ts';
import { v2Body } from '../envelope.ts';

export const listTopBrands: Handlers<RequestContext>['listTopBrands'] = async (_request, { catalog }) => ({
  status: 200,
  body: v2Body(await catalog.listTopBrands()),
});
