import type { ApiHandler } from './api-services.ts';
import { v2Body } from '../envelope.ts';

export const listTopBrands: ApiHandler<'listTopBrands'> = async (_request, { catalog }) => ({
  status: 200,
  body: v2Body(await catalog.listTopBrands()),
});
