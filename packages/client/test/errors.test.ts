// The refusal errors on their own: what a CatalogApiError says when the answer carried the
// contract's error body, and when it did not (a proxy's page, an empty answer).
import { describe, expect, it } from 'vitest';
import { CatalogApiError, PriceStreamError } from '../src/index.ts';

const errorBody = (error: string, message = 'Refused.') => ({ status: 'error', error, message, query: {}, data: null, meta: null });

describe('CatalogApiError', () => {
  it('takes code and message from the error body, and keeps the body', () => {
    const body = errorBody('too_many_streams', 'This key already has 2 open price streams.');
    const error = new CatalogApiError({ status: 429, body, requestId: 'r-1' });
    expect(error).toMatchObject({ name: 'CatalogApiError', code: 'too_many_streams', message: 'This key already has 2 open price streams.', status: 429, requestId: 'r-1', body });
  });

  it.each([
    [400, 'invalid_request'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [405, 'method_not_allowed'],
    [429, 'rate_limited'],
    [502, 'service_unavailable'],
    [503, 'service_unavailable'],
    [504, 'service_unavailable'],
    [500, 'internal_error'],
    [418, 'internal_error'],
  ] as const)('names the code of a %i without an error body after its status', (status, code) => {
    const error = new CatalogApiError({ status, body: '<html>Bad gateway</html>', requestId: undefined });
    expect(error).toMatchObject({ code, status, message: `HTTP ${status}: <html>Bad gateway</html>`, body: undefined });
  });

  it('says when the answer had no body, and quotes at most 200 characters of one that is not the contract\'s', () => {
    expect(new CatalogApiError({ status: 502, body: '  ', requestId: undefined }).message).toBe('HTTP 502 without an error body');
    expect(new CatalogApiError({ status: 502, body: { unexpected: true }, requestId: undefined }).message).toBe('HTTP 502 without an error body');
    expect(new CatalogApiError({ status: 502, body: null, requestId: undefined }).message).toBe('HTTP 502 without an error body');
    expect(new CatalogApiError({ status: 502, body: undefined, requestId: undefined }).message).toBe('HTTP 502 without an error body');
    expect(new CatalogApiError({ status: 502, body: `  ${'x'.repeat(300)}`, requestId: undefined }).message).toBe(`HTTP 502: ${'x'.repeat(200)}`);
  });

  it.each([
    ['an unknown code', errorBody('teapot')],
    ['a message that is not a string', { ...errorBody('not_found'), message: 7 }],
    ['a status other than "error"', { ...errorBody('not_found'), status: 'ok' }],
    ['a code that is not a string', { ...errorBody('not_found'), error: 404 }],
  ])('does not take a body with %s for the contract\'s error body', (_case, body) => {
    const error = new CatalogApiError({ status: 404, body, requestId: undefined });
    expect(error).toMatchObject({ code: 'not_found', message: 'HTTP 404 without an error body', body: undefined });
  });
});

describe('PriceStreamError', () => {
  it('is a CatalogApiError that keeps the Retry-After it was given', () => {
    const error = new PriceStreamError({ status: 503, body: errorBody('service_unavailable'), requestId: 'r-2', retryAfterMs: 3000 });
    expect(error).toBeInstanceOf(CatalogApiError);
    expect(error).toMatchObject({ name: 'PriceStreamError', code: 'service_unavailable', retryAfterMs: 3000, requestId: 'r-2' });
  });
});
