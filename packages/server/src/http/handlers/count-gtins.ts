import type { Handlers } from '../handler-types.ts';
import type { RequestContext } from '../context.ts';

export const countGtins: Handlers<RequestContext>['countGtins'] = async (_request, { catalog }) => ({
  status: 200,
  body: { count: await catalog.countGtins() },
});
