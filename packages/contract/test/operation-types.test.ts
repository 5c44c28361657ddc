// The derived request and result types, checked by the compiler (`pnpm typecheck` runs over test/).
import { describe, expectTypeOf, it } from 'vitest';
import { operations, type ApiOperationId, type OperationRequest, type OperationResult, type Plan } from '../src/index.ts';
import type { ErrorBody, GtinCount, StorefrontSort } from '../src/index.ts';

describe('operation types', () => {
  it('fills query parameters that have a default and keeps the others optional', () => {
    expectTypeOf<OperationRequest<'listStorefrontProducts'>['query']>().toEqualTypeOf<{
      query?: string;
      shop_name?: string;
      filters?: string;
      sort: StorefrontSort;
      page: number;
      limit: number;
    }>();
    expectTypeOf<OperationRequest<'getProduct'>['params']>().toEqualTypeOf<{ id: string }>();
    expectTypeOf<OperationRequest<'countGtins'>['query']>().toEqualTypeOf<Record<string, never>>();
  });

  it('gives one { status, body } per documented status', () => {
    type Statuses = OperationResult<'countGtins'>['status'];
    expectTypeOf<Statuses>().toEqualTypeOf<(typeof operations)['countGtins']['statuses'][number]>();
    expectTypeOf<Extract<OperationResult<'countGtins'>, { status: 200 }>['body']>().toEqualTypeOf<GtinCount>();
    expectTypeOf<Extract<OperationResult<'countGtins'>, { status: 503 }>['body']>().toEqualTypeOf<ErrorBody>();
  });

  it('derives plans and API operations from the table', () => {
    expectTypeOf<Plan>().toEqualTypeOf<'free' | 'pro'>();
    expectTypeOf<ApiOperationId>().toEqualTypeOf<'countGtins' | 'getProduct' | 'getProductPrices' | 'listStorefrontProducts' | 'listTopBrands' | 'searchVariants'>();
  });
});
