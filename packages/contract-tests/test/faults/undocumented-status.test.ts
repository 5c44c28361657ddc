// Fault: the server answers with a status the spec does not document for the operation (or leaves
// out a documented header, or changes the content type). Each is a violation.
import { describe, expect, it } from 'vitest';
import { operations, validateResponse } from '../support/spec.ts';
import { errorBody, JSON_HEADERS } from './bodies.ts';

describe('an undocumented status code', () => {
  for (const op of operations) {
    const undocumented = [201, 204, 302, 403, 404, 409, 422, 429, 502].filter((s) => !op.statuses.includes(s));
    it(`is reported on ${op.operationId} (${undocumented.join(', ')})`, () => {
      for (const status of undocumented) {
        expect(validateResponse(op.operationId, status, JSON_HEADERS, errorBody('internal_error')).join('\n')).toMatch(/not documented/);
      }
    });
  }

  it('reports a 405 without Allow, a 429 without Retry-After and any response without X-Request-Id', () => {
    expect(validateResponse('getProduct', 405, JSON_HEADERS, errorBody('method_not_allowed')).join('\n')).toMatch(/Allow/);
    expect(validateResponse('getProduct', 405, { ...JSON_HEADERS, allow: 'GET, HEAD' }, errorBody('method_not_allowed'))).toEqual([]);
    expect(validateResponse('countGtins', 429, JSON_HEADERS, errorBody('rate_limited')).join('\n')).toMatch(/Retry-After/);
    expect(validateResponse('countGtins', 429, { ...JSON_HEADERS, 'retry-after': '0' }, errorBody('rate_limited')).join('\n')).toMatch(/Retry-After/);
    expect(validateResponse('countGtins', 200, { 'content-type': 'application/json' }, { count: 1 }).join('\n')).toMatch(/X-Request-Id/);
  });

  it('reports a wrong content type and an error code outside the catalogue', () => {
    expect(validateResponse('countGtins', 200, { ...JSON_HEADERS, 'content-type': 'text/html' }, '<p>1</p>').join('\n')).toMatch(/content type/);
    expect(validateResponse('getProduct', 404, JSON_HEADERS, errorBody('missing')).length).toBeGreaterThan(0);
  });
});
