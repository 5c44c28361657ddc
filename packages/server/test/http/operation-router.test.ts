import { beforeEach, describe, expect, it } from 'vitest';
import { operations } from '@catalog/contract';
import { CatalogError } from '../../src/catalog/errors.ts';
import { createOperationRouter, operationsOf, type OperationRouter } from '../../src/http/operation-router.ts';

describe('createOperationRouter', () => {
  // Compiled in each test, not once for the file: compiling the contract's table is under test too.
  let api: OperationRouter;
  let stream: OperationRouter;
  beforeEach(() => {
    api = createOperationRouter(operationsOf('api'));
    stream = createOperationRouter(operationsOf('stream'));
  });

  it.each(Object.entries(operations))('routes %s on its own listener only, with its path parameters', (operationId, operation) => {
    const params = Object.fromEntries(operation.pathParameters.map((name) => [name, `${name}-value`]));
    const path = operation.pathParameters.reduce<string>((filled, name) => filled.replace(`{${name}}`, `${name}-value`), operation.path);
    const [own, other] = operation.listener === 'api' ? [api, stream] : [stream, api];
    expect(own(operation.method, path)).toEqual({ kind: 'operation', operationId, params });
    expect(other(operation.method, path)).toBeNull();
  });

  it('routes each listener to its own operations from the contract table', () => {
    expect(api('GET', '/v1/stream')).toBeNull();
    expect(stream('GET', '/v2/brands')).toBeNull();
    expect(stream('GET', '/v1/stream')).toEqual({ kind: 'operation', operationId: 'streamPrices', params: {} });
  });

  it.each(['/v2/brands', '/v2/brands/', '/V2/Brands', '/v2/BRANDS/'])('matches %s case-insensitively, with one trailing slash ignored', (path) => {
    expect(api('GET', path)).toEqual({ kind: 'operation', operationId: 'listTopBrands', params: {} });
  });

  it('decodes a path parameter, keeping an encoded slash inside the value', () => {
    expect(api('GET', '/v2/products/nike%2Ddunk%2Dlow')).toEqual({ kind: 'operation', operationId: 'getProduct', params: { id: 'nike-dunk-low' } });
    expect(api('HEAD', '/V2/Products/a%2Fb/')).toEqual({ kind: 'operation', operationId: 'getProduct', params: { id: 'a/b' } });
    expect(api('GET', '/v2/products/a%2Fb/prices')).toEqual({ kind: 'operation', operationId: 'getProductPrices', params: { id: 'a/b' } });
    expect(api('GET', '/v2/products/a%2Fprices')).toEqual({ kind: 'operation', operationId: 'getProduct', params: { id: 'a/prices' } });
  });

  it.each(['/v2/products/', '/v2/products/a/b', '/v2/products//prices', '/v2', '/', '/v2/brands//', '/v2/brandsx', '/v2brands', '/gtincount'])('matches no operation at %s', (path) => {
    expect(api('GET', path)).toBeNull();
  });

  it('answers a method the contract does not give the path with the methods it does', () => {
    expect(api('POST', '/v2/products/x')).toEqual({ kind: 'method_not_allowed', operationId: 'getProduct', allow: 'GET, HEAD' });
    expect(stream('DELETE', '/v1/stream')).toEqual({ kind: 'method_not_allowed', operationId: 'streamPrices', allow: 'GET, HEAD' });
  });

  it('refuses broken percent-encoding in a path parameter as invalid_request', () => {
    let thrown: unknown;
    try {
      api('GET', '/v2/products/%E0%A4%A');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CatalogError);
    expect(thrown).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('malformed') });
  });
});
