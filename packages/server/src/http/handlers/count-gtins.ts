import type { ApiHandler } from './index.ts';

export const countGtins: ApiHandler<'countGtins'> = async (_request, { catalog }) => ({
  status: 200,
  body: { count: await catalog.countGtins() },
});
