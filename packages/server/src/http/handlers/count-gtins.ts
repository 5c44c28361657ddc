import type { ApiHandler } from './api-services.ts';

export const countGtins: ApiHandler<'countGtins'> = async (_request, { catalog }) => ({
  status: 200,
  body: { count: await catalog.countGtins() },
});
